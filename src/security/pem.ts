// PEM text split into its blocks, so one file (or one inline config value) can hold a private key and a
// certificate chain, as Kafka's PEM keystores do.

export interface PemBlock {
  /** The label between BEGIN and END: CERTIFICATE, PRIVATE KEY, ENCRYPTED PRIVATE KEY, RSA PRIVATE KEY, ... */
  readonly label: string;
  /** The whole block, BEGIN and END lines included. */
  readonly text: string;
}

const BLOCK_PATTERN = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

export function pemBlocks(text: string): PemBlock[] {
  return [...text.matchAll(BLOCK_PATTERN)].map((m) => ({ label: m[1] as string, text: `${m[0]}\n` }));
}

export function certificateBlocks(text: string): string[] {
  return pemBlocks(text)
    .filter((b) => b.label === 'CERTIFICATE' || b.label === 'TRUSTED CERTIFICATE')
    .map((b) => b.text);
}

export function privateKeyBlocks(text: string): string[] {
  return pemBlocks(text)
    .filter((b) => b.label.endsWith('PRIVATE KEY'))
    .map((b) => b.text);
}
