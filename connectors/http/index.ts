// The shared HTTP transport for connectors to cores that speak HTTP: what a plugin imports.
export { authorizationHeader, type CoreRequest } from './client.js';
export { UNREADABLE, classifyTransportError, type Classified, type CoreAnswer, type TransportFailure } from './failures.js';
export { BaseUrl, HttpAuth, HttpOptionsError, HttpTransportOptions, resolveHttpOptions, type ResolvedHttpOptions } from './options.js';
export { fullJitter, type BreakerSnapshot, type BreakerState } from './policies.js';
export { HttpTransport, type AnswerMapper, type HttpTransportHooks, type HttpTransportStats } from './transport.js';
