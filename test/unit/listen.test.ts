// The operator's message when a listener cannot open its port (issue 20, point 9).
import { describe, expect, it } from 'vitest';
import { ListenError, listenError, type ListenerSpec } from '../../src/listen.js';

const admin: ListenerSpec = { name: 'management listener', host: '127.0.0.1', port: 8081, portVariable: 'CARDLINE_ADMIN_PORT', hostVariable: 'CARDLINE_ADMIN_HOST' };
const errno = (code: string) => Object.assign(new Error(`listen ${code}`), { code });

describe('listenError', () => {
  it('EADDRINUSE by another process, or by a listener of this one', () => {
    expect(listenError(errno('EADDRINUSE'), admin)?.message).toBe(
      'Cannot start the management listener on 127.0.0.1:8081: the port is in use by another process. Set CARDLINE_ADMIN_PORT to a free port.',
    );
    const publicApi = { ...admin, name: 'public API', port: 8081, portVariable: 'PORT', hostVariable: 'HOST' };
    expect(listenError(errno('EADDRINUSE'), admin, [publicApi])?.message).toBe(
      "Cannot start the management listener on 127.0.0.1:8081: the port is in use: this process's public API holds it (PORT=8081). " +
        'Set CARDLINE_ADMIN_PORT to a free port.',
    );
  });

  it('EACCES names the port variable; EADDRNOTAVAIL the address variable; an IPv6 address in brackets', () => {
    expect(listenError(errno('EACCES'), { ...admin, port: 80 })?.message).toBe(
      'Cannot start the management listener on 127.0.0.1:80: permission denied (ports below 1024 need privileges). Set CARDLINE_ADMIN_PORT to a port above 1023.',
    );
    expect(listenError(errno('EADDRNOTAVAIL'), { ...admin, host: '2001:db8::1' })?.message).toBe(
      'Cannot start the management listener on [2001:db8::1]:8081: 2001:db8::1 is not an address of this machine. ' +
        'Set CARDLINE_ADMIN_HOST to one that is (127.0.0.1, or 0.0.0.0 for all).',
    );
    expect(listenError(errno('EADDRINUSE'), admin)).toBeInstanceOf(ListenError);
  });

  it('anything else is left as it is', () => {
    expect(listenError(new Error('boom'), admin)).toBeNull();
    expect(listenError(undefined, admin)).toBeNull();
  });
});
