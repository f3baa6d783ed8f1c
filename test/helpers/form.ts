/**
 * Form bodies encoded the way the spec's clients send them (the same rules as `encodeForm` in
 * /work/shared/conformance/lib.mjs):
 *   { tag: [1, 2] }                           -> tag[]=1&tag[]=2
 *   { options: [{ value: 'a' }, { value: 'b' }] } -> options[0][value]=a&options[1][value]=b
 *   { customfield: { 3: 'x' } }               -> customfield[3]=x
 *   { 'name:fr': 'x' }                        -> name:fr=x
 * true/false become 1/0, null an empty value; undefined is left out.
 */
export function encodeForm(body: Record<string, unknown> = {}): string {
  const params = new URLSearchParams();
  const add = (key: string, value: unknown): void => {
    if (value === undefined) return;
    if (value === null) {
      params.append(key, '');
    } else if (typeof value === 'boolean') {
      params.append(key, value ? '1' : '0');
    } else if (Array.isArray(value)) {
      const scalars = value.every((v) => v === null || typeof v !== 'object');
      value.forEach((v, i) => add(scalars ? `${key}[]` : `${key}[${i}]`, v));
    } else if (typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) add(`${key}[${k}]`, v);
    } else {
      params.append(key, String(value));
    }
  };
  for (const [k, v] of Object.entries(body)) add(k, v);
  return params.toString();
}
