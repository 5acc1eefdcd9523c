import { Duration } from 'luxon';

/**
 * Parses an ISO 8601 duration (`PT15M`, `P1DT2H`) into milliseconds, or returns undefined when
 * the text is not a duration or uses years or months, whose length depends on the calendar and
 * so cannot be an inactivity timeout.
 */
export function parseIsoDurationMs(text: string): number | undefined {
  const duration = Duration.fromISO(text);
  if (!duration.isValid) return undefined;
  if (duration.years !== 0 || duration.months !== 0 || duration.quarters !== 0) return undefined;
  const ms = duration.toMillis();
  return Number.isFinite(ms) ? ms : undefined;
}
