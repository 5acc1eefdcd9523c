/**
 * The instant a date or an RFC 3339 date-time names (a query bound of the statistics, in the API
 * and the administration interface alike): a date is midnight UTC. `Date.parse` reads every
 * RFC 3339 date-time except an offset written without its colon or minutes (`+01`, `+0100`) and
 * a leap second (`23:59:60`, read here as the last millisecond before it), so those are written
 * in its form first.
 */
export function instantOf(text: string): Date {
  if (text.length === 10) return new Date(`${text}T00:00:00.000Z`);
  const readable = text
    .replace(
      /([+-]\d{2}):?(\d{2})?$/,
      (_match, hours: string, minutes?: string) => `${hours}:${minutes ?? '00'}`,
    )
    .replace(/:60(\.\d+)?(?=[zZ+-])/, ':59.999');
  return new Date(Date.parse(readable));
}
