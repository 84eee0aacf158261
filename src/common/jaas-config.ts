// Kafka's JAAS configuration syntax, as sasl.jaas.config values carry it: `<LoginModule class>
// <required|requisite|sufficient|optional> key="value" ...;`, one or more entries. Only the syntax lives here; what
// the options mean belongs to the reader (the broker's authenticator in src/security, the client's security keys
// in src/client/security-config.ts), so both sides share one parser.

export class JaasConfigError extends Error {
  override name = 'JaasConfigError';
}

export interface JaasEntry {
  readonly loginModule: string;
  readonly flag: string;
  readonly options: ReadonlyMap<string, string>;
}

const FLAGS = new Set(['required', 'requisite', 'sufficient', 'optional']);
// A token: a quoted string (with backslash escapes), a ';' or '=', or a bare word.
const TOKEN = /\s*(?:"((?:\\.|[^"\\])*)"|([;=])|([^\s;="]+))/y;

interface Token {
  readonly text: string;
  readonly quoted: boolean;
}

function tokens(text: string): Token[] {
  const out: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    if (/^\s*$/.test(text.slice(TOKEN.lastIndex))) break;
    const m = TOKEN.exec(text);
    if (m === null)
      throw new JaasConfigError(
        `cannot parse the JAAS config near "${text.slice(TOKEN.lastIndex, TOKEN.lastIndex + 20)}"`,
      );
    if (m[1] !== undefined) out.push({ text: m[1].replace(/\\(.)/g, '$1'), quoted: true });
    else out.push({ text: (m[2] ?? m[3]) as string, quoted: false });
  }
  return out;
}

export function parseJaasConfig(text: string): JaasEntry[] {
  const entries: JaasEntry[] = [];
  const list = tokens(text);
  let i = 0;
  while (i < list.length) {
    const loginModule = list[i++];
    const flag = list[i++];
    if (loginModule === undefined || loginModule.quoted || flag === undefined || !FLAGS.has(flag.text)) {
      throw new JaasConfigError(
        'expected "<LoginModule> required|requisite|sufficient|optional key=value ...;"',
      );
    }
    const options = new Map<string, string>();
    while (list[i] !== undefined && list[i]?.text !== ';') {
      const key = list[i];
      const eq = list[i + 1];
      const value = list[i + 2];
      if (key === undefined || eq?.text !== '=' || value === undefined) {
        throw new JaasConfigError(`expected key=value in the options of ${loginModule.text}`);
      }
      options.set(key.text, value.text);
      i += 3;
    }
    if (list[i]?.text !== ';')
      throw new JaasConfigError(`the JAAS entry of ${loginModule.text} must end with ';'`);
    i++;
    entries.push({ loginModule: loginModule.text, flag: flag.text, options });
  }
  if (entries.length === 0) throw new JaasConfigError('the JAAS config has no login module');
  return entries;
}
