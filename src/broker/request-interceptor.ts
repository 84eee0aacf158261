// A hook in the request dispatcher through which a test can delay, drop, answer or rewrite a request inside one
// broker, as franz-go's fake cluster (kfake) lets a test take over a request key. Tests use it instead of a TCP
// proxy when they run the broker in their own process (test/helpers/in-process-broker.ts); `brook server` never
// installs one, and without one the dispatcher pays a single null check per request.
//
// An interceptor sees every request after its header and body are decoded and before the handler runs:
// - it returns undefined: the request goes to its handler untouched (the common case: intercept only some keys);
// - it returns a response body, or null for no response at all (the client then waits for it: a dropped
//   request), or a promise of either: that is the answer, and the handler never runs unless the interceptor
//   called `handle()`. A promise lets a test hold a request and answer it later, delay it
//   (`await sleep(ms); return request.handle()`), or change the broker's own answer (`const r = await
//   request.handle(); ...; return r`);
// - it may change `body` in place before calling `handle()`, to rewrite the request the handler sees.
// A request whose answer is a promise no longer counts against queued.max.requests (it waits for the test, not for
// the broker). Responses still leave each connection in request order, but a delayed request's handler runs after
// those of later requests on its connection: the handler order that a network delay keeps is not kept here.

import { assert } from '../common/assert.js';
import type { RequestHeader } from '../protocol/headers.js';

export interface InterceptedRequest<Body = unknown> {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly header: RequestHeader;
  /** The listener the request came in on. */
  readonly listenerName: string;
  /** The decoded request body, which the interceptor may change before calling handle(). */
  readonly body: Body;
  /** Runs the broker's handler on `body`, at most once; resolves to its response body (null: no response). */
  handle(): Promise<unknown>;
}

/** See the file header: undefined passes the request on; anything else is the answer. */
export type RequestInterceptor = (request: InterceptedRequest) => unknown;

/** The interceptor a broker's dispatcher consults, replaceable while the broker runs. */
export class RequestInterception {
  private interceptor: RequestInterceptor | null = null;

  get current(): RequestInterceptor | null {
    return this.interceptor;
  }

  /** Installs `interceptor` for the requests dispatched from now on, replacing any other. */
  set(interceptor: RequestInterceptor): void {
    this.interceptor = interceptor;
  }

  clear(): void {
    this.interceptor = null;
  }
}

/**
 * Calls `interceptor` for one request. Answers undefined when the request should go to its handler as usual
 * (the interceptor did not take it), else the interceptor's answer.
 */
export function interceptRequest(
  interceptor: RequestInterceptor,
  request: Omit<InterceptedRequest, 'handle'>,
  runHandler: () => unknown,
): unknown {
  let handled = false;
  const answer = interceptor({
    ...request,
    handle: () => {
      assert(!handled, 'an intercepted request is handled at most once');
      handled = true;
      return Promise.resolve(runHandler());
    },
  });
  assert(answer !== undefined || !handled, 'an interceptor that calls handle() must return its answer');
  return answer;
}
