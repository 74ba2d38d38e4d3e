// Free TCP ports for the test servers (sshd, Slurm, code-server), picked by the kernel.
import * as net from "node:net";

/** Binds `n` ports at once (so they differ), then frees them for the servers to take. */
export async function freePorts(n: number, host = "127.0.0.1"): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.unref();
          server.once("error", reject);
          server.listen(0, host, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

export async function freePort(host = "127.0.0.1"): Promise<number> {
  return (await freePorts(1, host))[0]!;
}
