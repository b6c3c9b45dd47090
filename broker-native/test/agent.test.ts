// The load agent through the addon (what `kbench agent` runs): it binds where told (port 0
// resolved), speaks protocol v1 to a plain TCP client, and refuses options it cannot use.
import { connect, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { startAgent } from '@kbench/broker-native';
import { describe, expect, it } from 'vitest';

/** A line-by-line JSON client; `call` sends a request with the next id and awaits its reply. */
async function controller(address: string) {
  const [host, port] = [
    address.slice(0, address.lastIndexOf(':')),
    Number(address.slice(address.lastIndexOf(':') + 1)),
  ];
  const socket: Socket = connect({ host, port });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const lines = createInterface({ input: socket })[Symbol.asyncIterator]();
  let id = 0;
  return {
    closed,
    async call(request: Record<string, unknown>): Promise<Record<string, unknown>> {
      id += 1;
      socket.write(`${JSON.stringify({ ...request, id })}\n`);
      const line = await lines.next();
      if (line.done) throw new Error('the agent closed the connection');
      const reply = JSON.parse(line.value) as Record<string, unknown>;
      expect(reply.id).toBe(id);
      return reply;
    },
  };
}

describe('startAgent', () => {
  it('serves hello and time where it bound, and close ends its connections', async () => {
    const agent = await startAgent({ listen: '127.0.0.1:0', token: 'tok', name: 'loader-a' });
    expect(agent.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(agent.address).not.toBe('127.0.0.1:0');
    expect(agent.name).toBe('loader-a');
    const c = await controller(agent.address);
    const hello = await c.call({ op: 'hello', version: 1, token: 'tok' });
    expect(hello).toMatchObject({ ok: true, version: 1, agent: { name: 'loader-a' } });
    const before = Date.now() * 1000;
    const time = await c.call({ op: 'time' });
    expect(time.ok).toBe(true);
    // The agent's clock is this machine's: the reply falls between the two readings (±1 ms).
    expect(time.micros as number).toBeGreaterThanOrEqual(before - 1000);
    expect(time.micros as number).toBeLessThanOrEqual(Date.now() * 1000 + 1000);
    await agent.close();
    await c.closed;
    await agent.close();
  });

  it('refuses a wrong token and closes the connection', async () => {
    const agent = await startAgent({ listen: '127.0.0.1:0', token: 'tok' });
    const c = await controller(agent.address);
    expect(await c.call({ op: 'hello', version: 1, token: 'nope' })).toEqual({
      id: 1,
      ok: false,
      error: 'hello.token: refused',
    });
    await c.closed;
    await agent.close();
  });

  it('refuses options it cannot use, naming them', async () => {
    await expect(startAgent({ listen: '127.0.0.1:0', token: '' })).rejects.toThrow(/^token: /);
    await expect(startAgent({ listen: '127.0.0.1:0', token: 't', allow: ['kafka'] })).rejects.toThrow(
      /^allow: "kafka" is not host:port/,
    );
    await expect(
      startAgent({ listen: '127.0.0.1:0', token: 't', tlsCert: '/nonexistent.pem' }),
    ).rejects.toThrow(/tlsCert and tlsKey go together/);
    await expect(
      startAgent({
        listen: '127.0.0.1:0',
        token: 't',
        tlsCert: '/nonexistent.pem',
        tlsKey: '/nonexistent.key',
      }),
    ).rejects.toThrow(/^tls-cert: .*nonexistent\.pem/);
    const agent = await startAgent({ listen: '127.0.0.1:0', token: 't' });
    await expect(startAgent({ listen: agent.address, token: 't' })).rejects.toThrow(
      `cannot listen on ${agent.address}: `,
    );
    await agent.close();
  });
});
