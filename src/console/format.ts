// How the message browser shows record bytes: as text (UTF-8, with invalid sequences replaced), as JSON
// pretty-printed (when the text parses as JSON), or as a hex dump. No DOM and no Node APIs, so the page's bundle
// and node tests use the same code.

export type ShowAs = 'text' | 'json' | 'hex';

/** base64 (as the API sends bytes) to bytes. */
export function fromBase64(b64: string): Uint8Array {
  const binary = atob(b64);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

const decoder = new TextDecoder('utf-8', { fatal: false });

export function asText(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Pretty JSON, or null when the bytes are not a JSON text. */
export function asJson(bytes: Uint8Array): string | null {
  const text = asText(bytes).trim();
  if (text === '') return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return null;
  }
}

/** 16 bytes a line: offset, hex pairs, and the printable ASCII beside them, as `xxd` prints. */
export function asHex(bytes: Uint8Array): string {
  const lines: string[] = [];
  for (let at = 0; at < bytes.length; at += 16) {
    const row = bytes.subarray(at, at + 16);
    const hex: string[] = [];
    let ascii = '';
    for (const b of row) {
      hex.push(b.toString(16).padStart(2, '0'));
      ascii += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
    }
    lines.push(`${at.toString(16).padStart(8, '0')}  ${hex.join(' ').padEnd(47)}  ${ascii}`);
  }
  return lines.join('\n');
}

/** The bytes shown the way asked; JSON falls back to text when the bytes are not JSON. */
export function show(b64: string | null, as: ShowAs): string {
  if (b64 === null) return '(null)';
  const bytes = fromBase64(b64);
  if (as === 'hex') return asHex(bytes);
  if (as === 'json') return asJson(bytes) ?? asText(bytes);
  return asText(bytes);
}

/** 1536 -> "1.5 KiB". */
export function formatBytes(n: number | null): string {
  if (n === null) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(1)} ${units[u]}`;
}
