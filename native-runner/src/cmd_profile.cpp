// `bprof-runner profile` (PROTOCOL.md): work in progress in this session.
#include "commands.h"

namespace bprof {

int run_profile(const Command& command) {
  Job job = load_job_for(command);
  throw RunnerError(ErrorCode::internal, "profile: not implemented yet");
}

}  // namespace bprof
