/**
 * IANA time zone names, current and legacy (`Asia/Kolkata` and `Asia/Calcutta`, `Europe/Kyiv` and
 * `Europe/Kiev`, `Etc/UTC`, `UTC`, `US/Eastern`): a name is accepted when the runtime's time zone
 * data (ICU) knows it. `Intl.supportedValuesOf('timeZone')` alone would not do: it lists one
 * canonical name per zone, and not always the current one (Node 20 lists Asia/Calcutta, not
 * Asia/Kolkata).
 *
 * ICU also takes any capitalisation (`asia/kolkata`); the API takes IANA's spelling only, so that a
 * stored name compares equal to itself elsewhere: exactly as listed for the names the runtime
 * lists, and otherwise every part capitalised the IANA way (starting with a capital letter).
 */

/** Spellings the runtime gives, by lower-cased name. */
const spellings = new Map<string, string>();
for (const listed of Intl.supportedValuesOf('timeZone')) {
  for (const name of [listed, new Intl.DateTimeFormat('en', { timeZone: listed }).resolvedOptions().timeZone]) {
    spellings.set(name.toLowerCase(), name);
  }
}

const knownToRuntime = (name: string): boolean => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
};

/** Answers by name (a Map: bounded, since names come from requests). */
const answers = new Map<string, boolean>();
const MAX_ANSWERS = 2000;

export function isTimeZone(name: string): boolean {
  const cached = answers.get(name);
  if (cached !== undefined) return cached;
  let ok = name.length <= 64 && knownToRuntime(name);
  if (ok) {
    const spelt = spellings.get(name.toLowerCase());
    ok = spelt !== undefined ? spelt === name : name.split('/').every((part) => /^[A-Z]/.test(part));
  }
  if (answers.size < MAX_ANSWERS) answers.set(name, ok);
  return ok;
}
