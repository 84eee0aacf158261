// A master key provider backed by an external key service over HTTP(S): a KMS, or a Vault-style transit engine
// behind a small adapter. Brook sends it only 32-byte key-encryption keys to wrap and unwrap, never data.
//
// The contract (JSON bodies, UTF-8, base64 with padding for bytes; see src/storage/README.md):
//   POST <url>/wrap    {"keyId"?: string, "plaintext": b64}  → 200 {"keyId": string, "ciphertext": b64}
//   POST <url>/unwrap  {"keyId": string, "ciphertext": b64} → 200 {"plaintext": b64}
// `keyId` in a wrap request is brook.encryption.key.http.key.id when set; without it the service uses its own
// current key and says which in the answer (that is how a rotation made in the service reaches Brook). The answer's
// keyId is stored with the wrapped key and sent back to unwrap it. Any other status is a failure; the service's
// message (the first 200 characters of its body, the key sent blanked out) is repeated in Brook's error. With
// brook.encryption.key.http.token set, each request carries `Authorization: Bearer <token>`.

import { MasterKeyError, type MasterKeyProvider, type WrappedKey } from './master-key-provider.js';

export interface HttpKeyProviderOptions {
  readonly url: string;
  readonly keyId: string | null;
  readonly token: string | null;
  readonly timeoutMs: number;
}

export class HttpKeyProvider implements MasterKeyProvider {
  readonly description: string;
  private readonly base: string;

  constructor(private readonly options: HttpKeyProviderOptions) {
    let parsed: URL;
    try {
      parsed = new URL(options.url);
    } catch {
      throw new MasterKeyError(`key service url '${options.url}' is not a URL`);
    }
    // Credentials in the url would be repeated in every message naming the service, and fetch refuses them:
    // brook.encryption.key.http.token is where a secret goes.
    if (parsed.username !== '' || parsed.password !== '') {
      parsed.username = '';
      parsed.password = '';
      throw new MasterKeyError(
        `key service url '${parsed.href}' must not hold credentials (set brook.encryption.key.http.token)`,
      );
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new MasterKeyError(`key service url '${options.url}' is not http or https`);
    }
    this.base = options.url.replace(/\/+$/, '');
    this.description = `key service ${this.base}`;
  }

  async wrap(plaintext: Buffer): Promise<WrappedKey> {
    const body: Record<string, string> = { plaintext: plaintext.toString('base64') };
    if (this.options.keyId !== null) body.keyId = this.options.keyId;
    const answer = await this.post('wrap', body);
    const keyId = answer.keyId;
    const ciphertext = answer.ciphertext;
    if (typeof keyId !== 'string' || keyId === '' || typeof ciphertext !== 'string') {
      throw new MasterKeyError(`${this.description}/wrap answered without keyId and ciphertext`);
    }
    return { keyId, wrapped: Buffer.from(ciphertext, 'base64') };
  }

  async unwrap(keyId: string, wrapped: Buffer): Promise<Buffer> {
    const answer = await this.post('unwrap', { keyId, ciphertext: wrapped.toString('base64') });
    if (typeof answer.plaintext !== 'string') {
      throw new MasterKeyError(`${this.description}/unwrap answered without plaintext`);
    }
    return Buffer.from(answer.plaintext, 'base64');
  }

  async refresh(): Promise<void> {}

  keyIds(): null {
    return null;
  }

  private async post(operation: string, body: Record<string, string>): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.token !== null) headers.authorization = `Bearer ${this.options.token}`;
    let response: Response;
    let text: string;
    // The timeout covers the body too: a service that sends its headers and then stalls is as unreachable as a
    // silent one (the abort then surfaces from reading the body, not from fetch).
    try {
      response = await fetch(`${this.base}/${operation}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      text = await response.text();
    } catch (err) {
      const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
      throw new MasterKeyError(`${this.description}/${operation} unreachable: ${cause}`);
    }
    if (!response.ok) {
      const said = withoutKey(text, body.plaintext).slice(0, 200).trim();
      throw new MasterKeyError(`${this.description}/${operation} answered ${response.status}: ${said}`);
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null) return parsed as Record<string, unknown>;
    } catch {}
    throw new MasterKeyError(`${this.description}/${operation} answered no JSON object`);
  }
}

/**
 * A service's error text with the key Brook sent it blanked out: a careless service may repeat the request it
 * refused, and its message goes to the broker's log.
 */
function withoutKey(text: string, plaintextB64: string | undefined): string {
  if (plaintextB64 === undefined) return text;
  const key = Buffer.from(plaintextB64, 'base64');
  let out = text;
  for (const form of [plaintextB64, key.toString('base64url'), key.toString('hex')]) {
    out = out.split(form).join('<key>');
  }
  return out.replace(new RegExp(key.toString('hex'), 'gi'), '<key>');
}
