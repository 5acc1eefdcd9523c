import { Duration } from 'luxon';

/**
 * The ISO 8601 durations a timeout may be written as: weeks, days, hours, minutes and seconds
 * (`PT15M`, `P1DT2H`, `PT1.5S`), never years or months, whose length depends on the calendar.
 * Components are not negative. Request schemas check this pattern; `parseIsoDurationMs` reads
 * only what it matches.
 */
export const ISO_DURATION_PATTERN =
  '^P(?:\\d+(?:\\.\\d+)?W)?(?:\\d+(?:\\.\\d+)?D)?(?:T(?:\\d+(?:\\.\\d+)?H)?(?:\\d+(?:\\.\\d+)?M)?(?:\\d+(?:[.,]\\d+)?S)?)?$';

const ISO_DURATION = new RegExp(ISO_DURATION_PATTERN);

/**
 * Parses an ISO 8601 duration of `ISO_DURATION_PATTERN` (`PT15M`, `P1DT2H`) into milliseconds,
 * or returns undefined when the text is not one.
 */
export function parseIsoDurationMs(text: string): number | undefined {
  if (!ISO_DURATION.test(text)) return undefined;
  const duration = Duration.fromISO(text);
  if (!duration.isValid) return undefined;
  const ms = duration.toMillis();
  return Number.isFinite(ms) ? ms : undefined;
}
