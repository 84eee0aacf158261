// A typed Kafka client for broker tests: encodes requests with the generated codecs, sends them over a real
// socket (the network module's RawClient), and decodes the responses. One request at a time unless the test
// pipelines on purpose with send()/receive().

import { RawClient } from '../../src/network/raw-client.js';
import { decodeResponseHeader, encodeRequestHeader } from '../../src/protocol/headers.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { getApi } from '../../src/protocol/registry.js';

export class WireClient {
  private correlationId = 1;
  private readonly sent: { apiKey: number; apiVersion: number; correlationId: number }[] = [];

  private constructor(readonly raw: RawClient) {}

  static async connect(host: string, port: number): Promise<WireClient> {
    return new WireClient(await RawClient.connect(host, port));
  }

  /** Encodes one request frame (header and body, no size prefix). */
  static encode(
    apiKey: number,
    apiVersion: number,
    correlationId: number,
    body: unknown,
    clientId = 'wire-test',
  ): Buffer {
    const w = new Writer();
    encodeRequestHeader(w, {
      requestApiKey: apiKey,
      requestApiVersion: apiVersion,
      correlationId,
      clientId,
    });
    getApi(apiKey).encodeRequest(w, apiVersion, body);
    return w.toBuffer();
  }

  send(apiKey: number, apiVersion: number, body: unknown): number {
    const correlationId = this.correlationId++;
    this.raw.sendFrame(WireClient.encode(apiKey, apiVersion, correlationId, body));
    this.sent.push({ apiKey, apiVersion, correlationId });
    return correlationId;
  }

  // Tests read decoded responses field by field; typing every response here would repeat the codecs' types.
  // biome-ignore lint/suspicious/noExplicitAny: see above.
  async receive<T = any>(timeoutMs = 10_000): Promise<T> {
    const request = this.sent.shift();
    if (request === undefined) throw new Error('nothing was sent');
    const frame = await this.raw.nextFrame(timeoutMs);
    const r = new Reader(frame);
    const header = decodeResponseHeader(r, request.apiKey, request.apiVersion);
    if (header.correlationId !== request.correlationId) {
      throw new Error(`correlation id ${header.correlationId}, expected ${request.correlationId}`);
    }
    return getApi(request.apiKey).decodeResponse(r, request.apiVersion) as T;
  }

  // biome-ignore lint/suspicious/noExplicitAny: as receive().
  async call<T = any>(apiKey: number, apiVersion: number, body: unknown, timeoutMs = 10_000): Promise<T> {
    this.send(apiKey, apiVersion, body);
    return this.receive<T>(timeoutMs);
  }

  close(): void {
    this.raw.socket.destroy();
  }
}
