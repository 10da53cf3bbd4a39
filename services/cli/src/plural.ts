// "1 request", "2 requests": English plurals by Intl.PluralRules (built in), for counts in output.
const rules = new Intl.PluralRules('en');

/** `count` and the noun in the form the count takes; `many` when the plural is not noun + s. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${rules.select(count) === 'one' ? one : many}`;
}
