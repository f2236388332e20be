// At shutdown, a connection that carries no request is closed at once and one with an answer under way is left
// to finish (src/shutdown.ts): also when requests are pipelined, where the answer to the first ends while the
// second is already being answered.
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { unusedConnections } from '../../src/shutdown.js';

/** A gate a handler waits on until the test opens it. */
const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
};

let server: Server;
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A server answering `/first` and `/second` once their gates open; `entered` resolves as each handler starts. */
async function start() {
  const gates = { first: gate(), second: gate() };
  const entered = { first: gate(), second: gate() };
  server = createServer((req, res) => {
    const name = req.url === '/first' ? 'first' : 'second';
    entered[name].open();
    void gates[name].opened.then(() => res.end(name));
  });
  const closeUnused = unusedConnections([server]);
  // The connections the server has accepted, and a wait for their number.
  let accepted = 0;
  const waiters: (() => void)[] = [];
  server.on('connection', () => {
    accepted++;
    waiters.splice(0).forEach((w) => w());
  });
  const acceptedAtLeast = async (n: number) => {
    while (accepted < n) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { gates, entered, closeUnused, acceptedAtLeast, port: (server.address() as AddressInfo).port };
}

/** A raw connection and everything it has received, with a wait for received text. */
function client(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  let received = '';
  let closed = false;
  const waiters: (() => void)[] = [];
  const changed = () => waiters.splice(0).forEach((w) => w());
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1');
    changed();
  });
  // A connection the server destroys is reset: its closing is what the test reads.
  socket.on('error', () => undefined);
  socket.on('close', () => {
    closed = true;
    changed();
  });
  const until = async (done: () => boolean) => {
    while (!done()) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { socket, received: () => received, closed: () => closed, until };
}

const GET = (path: string) => `GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`;

describe('unusedConnections', () => {
  it('leaves a connection whose pipelined second request is being answered when the first answer has ended', async () => {
    const { gates, entered, closeUnused, port } = await start();
    const c = client(port);
    c.socket.write(GET('/first') + GET('/second'));
    await entered.first.opened;
    await entered.second.opened;
    gates.first.open();
    await c.until(() => c.received().includes('first') || c.closed());
    closeUnused();
    gates.second.open();
    await c.until(() => c.received().includes('second') || c.closed());
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nfirst[\s\S]*HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nsecond$/);
    c.socket.destroy();
  });

  it('closes at once a connection whose request headers never completed, and an idle one', async () => {
    const { closeUnused, acceptedAtLeast, port } = await start();
    const half = client(port);
    half.socket.write('GET /first HTTP/1.1\r\nHost: te');
    const idle = client(port);
    await acceptedAtLeast(2);
    closeUnused();
    await half.until(half.closed);
    await idle.until(idle.closed);
    expect(half.received()).toBe('');
    expect(idle.received()).toBe('');
  });
});
