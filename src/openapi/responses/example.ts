import type { Json } from './schema';

/**
 * A plausible value of a response schema, built from the schema itself (the record's own field
 * names make the values: `email` an address, `*_at` a time, `*_id` an id).
 */
export function exampleOf(schema: Json, name = 'value', components: Json = {}): unknown {
  if (schema.$ref) return exampleOf(components[schema.$ref.split('/').pop()!] ?? {}, name, components);
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum.find((e: unknown) => e !== null) ?? schema.enum[0];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return exampleOf(alternatives.find((s: Json) => s.type !== 'null') ?? alternatives[0], name, components);
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const type = types.find((t) => t !== 'null');
  switch (type) {
    case 'object': {
      if (!schema.properties) return schema.additionalProperties ? { example_key: exampleOf(schema.additionalProperties, 'value', components) } : {};
      return Object.fromEntries(Object.entries(schema.properties as Json).map(([k, s]) => [k, exampleOf(s, k, components)]));
    }
    case 'array':
      return [exampleOf(schema.items ?? {}, name.replace(/s$/, ''), components)];
    case 'integer':
    case 'number':
      if (/(_at|_time|^expiry)$/.test(name)) return 1700000000;
      if (/^(id|.*_id)$/.test(name)) return 1;
      return /^(order|size|count|attempts)$/.test(name) ? 1 : 0;
    case 'boolean':
      return true;
    case 'string':
      if (/email|address/.test(name)) return 'someone@example.com';
      if (/url$/.test(name)) return 'https://help.example.com/page';
      if (name === 'colour') return '#3b82f6';
      if (/^(country)$/.test(name)) return 'GB';
      if (/^(language_code|code|locale)$/.test(name)) return 'en';
      if (/(^|_)ip(_address)?$/.test(name)) return '192.0.2.10';
      if (name === 'slug') return 'example-slug';
      if (name === 'number') return '2024-00001';
      return `Example ${name.replace(/_/g, ' ')}`;
    default:
      return types.includes('null') ? null : {};
  }
}
