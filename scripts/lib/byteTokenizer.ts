// A byte-level tokenizer in Hugging Face's tokenizer.json format: token id = byte value, so that
// tiny test models need no trained vocabulary and any UTF-8 text round-trips exactly.

export const BOS_TOKEN = "<|begin_of_text|>";
export const EOS_TOKEN = "<|end_of_text|>";
export const BOS_TOKEN_ID = 256;
export const EOS_TOKEN_ID = 257;
export const BYTE_VOCAB_SIZE = 258;

/**
 * GPT-2's bytes_to_unicode: byte b -> a printable character. Printable Latin-1 bytes map to
 * themselves; the others to U+0100 onwards, in byte order. ByteLevel pre-tokenizers and
 * decoders use exactly this table, so the vocabulary must be spelled with it.
 */
export function bytesToUnicode(): string[] {
  const printable = (b: number): boolean => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const table: string[] = [];
  let next = 0;
  for (let b = 0; b < 256; b++) {
    table.push(String.fromCharCode(printable(b) ? b : 256 + next++));
  }
  return table;
}

function addedToken(id: number, content: string): Record<string, unknown> {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
}

function byteVocab(): Record<string, number> {
  const vocab: Record<string, number> = {};
  bytesToUnicode().forEach((ch, b) => {
    vocab[ch] = b;
  });
  return vocab;
}

// BOS before every sequence when special tokens are added, as Llama 3's tokenizer does.
function bosTemplate(): Record<string, unknown> {
  const bos = { SpecialToken: { id: BOS_TOKEN, type_id: 0 } };
  return {
    type: "TemplateProcessing",
    single: [bos, { Sequence: { id: "A", type_id: 0 } }],
    pair: [
      bos,
      { Sequence: { id: "A", type_id: 0 } },
      { SpecialToken: { id: BOS_TOKEN, type_id: 1 } },
      { Sequence: { id: "B", type_id: 1 } },
    ],
    special_tokens: { [BOS_TOKEN]: { id: BOS_TOKEN, ids: [BOS_TOKEN_ID], tokens: [BOS_TOKEN] } },
  };
}

export interface ByteTokenizerFiles {
  /** Contents of tokenizer.json. */
  tokenizerJson: Record<string, unknown>;
  /** Contents of tokenizer_config.json. */
  tokenizerConfig: Record<string, unknown>;
}

/**
 * tokenizer.json and tokenizer_config.json of a 258-token byte-level BPE: ids 0..255 are the
 * bytes, 256 is BOS, 257 is EOS. With no merges, BPE leaves every byte its own token; the
 * regex split is off because it would only cut the text into pieces to no effect.
 */
export function byteLevelTokenizer(options: { modelMaxLength?: number } = {}): ByteTokenizerFiles {
  const tokenizerJson = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [addedToken(BOS_TOKEN_ID, BOS_TOKEN), addedToken(EOS_TOKEN_ID, EOS_TOKEN)],
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
    post_processor: bosTemplate(),
    decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: byteVocab(),
      merges: [],
    },
  };
  const tokenizerConfig = {
    tokenizer_class: "PreTrainedTokenizerFast",
    bos_token: BOS_TOKEN,
    eos_token: EOS_TOKEN,
    // Without this, decoders "clean up" spaces before punctuation and text would not round-trip.
    clean_up_tokenization_spaces: false,
    model_max_length: options.modelMaxLength ?? 2048,
    model_input_names: ["input_ids", "attention_mask"],
    added_tokens_decoder: {
      [String(BOS_TOKEN_ID)]: { content: BOS_TOKEN, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true },
      [String(EOS_TOKEN_ID)]: { content: EOS_TOKEN, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true },
    },
  };
  return { tokenizerJson, tokenizerConfig };
}
