import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { FormRefused, formInput } from '../../src/http/admin/form-input.js';
import { ReprocessScheduleInput } from '../../src/modules/accounting/inputs.js';
import { SubscriptionBody } from '../../src/modules/events/inputs.js';

const form = (fields: [string, string][]) => new URLSearchParams(fields);

/** Issue 51: an administration form is read through the API's schema of the same request. */
describe('formInput', () => {
  it('reads numbers, lists and text as the API body carries them, leaving empty optional fields out', () => {
    expect(
      formInput(
        ReprocessScheduleInput,
        form([
          ['mode', 'interval'],
          ['dailyAt', '08:00'],
          ['intervalMinutes', '240'],
          ['maxAttempts', ' 5 '],
        ]),
        'bad',
      ),
    ).toEqual({ mode: 'interval', dailyAt: '08:00', intervalMinutes: 240, maxAttempts: 5 });
    expect(
      formInput(
        SubscriptionBody,
        form([
          ['url', 'https://hooks.example.com/a'],
          ['eventTypes', 'ingestion.closed'],
          ['eventTypes', 'processing.failed'],
          ['description', ''],
        ]),
        'bad',
      ),
    ).toEqual({ url: 'https://hooks.example.com/a', eventTypes: ['ingestion.closed', 'processing.failed'] });
  });

  it('fills in the defaults the API fills in, and reads a ticked box as true', () => {
    const schema = Type.Object({
      limit: Type.Integer({ default: 50 }),
      all: Type.Boolean({ default: false }),
    });
    expect(formInput(schema, form([['all', 'on']]), 'bad')).toEqual({ limit: 50, all: true });
  });

  it('refuses with every field at fault named by its rule, in the words of the API', () => {
    let refused: unknown;
    try {
      formInput(
        ReprocessScheduleInput,
        form([
          ['mode', 'weekly'],
          ['dailyAt', '08:00'],
          ['intervalMinutes', 'soon'],
        ]),
        'The schedule is not valid',
      );
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(FormRefused);
    const { status, title, errors, message } = refused as FormRefused;
    expect({ status, title }).toEqual({ status: 400, title: 'The schedule is not valid' });
    expect([...new Set(errors.map((error) => error.path))].sort()).toEqual([
      '/intervalMinutes',
      '/maxAttempts',
      '/mode',
    ]);
    expect(message).toContain('maxAttempts is required');
  });
});
