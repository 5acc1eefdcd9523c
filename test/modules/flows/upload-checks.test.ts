import { describe, expect, it } from 'vitest';
import { validateConfiguration } from '../../../src/composition/configuration-checks.js';
import {
  ENGINE,
  errorsAfter,
  expectOnly,
  FLOW,
  fixture,
  get,
  INPUT,
  PROCESSOR,
  remove,
  SCRIPT,
  set,
} from '../configuration/fixture-edits.js';

describe('flow checks: unique names', () => {
  it('reports a duplicate flow name', () => {
    const errors = errorsAfter((d) => {
      const flows = get(d, '/configuration/flows') as unknown[];
      // A draft, so that only the name is at fault (two published flows may not read one entity).
      flows.push({ ...(structuredClone(flows[0]) as object), versionStatus: 'Draft' });
    });
    expectOnly(errors, '/configuration/flows/1/name', /duplicate name/);
  });
});

describe('flow checks: cross-references and published flows', () => {
  it('reports an Input step naming an unknown entity', () => {
    const path = `${FLOW}/nodes/${INPUT}/step/source`;
    const errors = errorsAfter((d) => set(d, `${path}/name`, 'loanTransactions'));
    expect(errors[0]).toEqual({
      path,
      message: expect.stringMatching(/unknown entity "loans\/loanTransactions"/),
    });
  });

  it('accepts an Input step on the built-in ledger entities in a draft flow', () => {
    const doc = fixture();
    set(doc, '/configuration/flows/0/versionStatus', 'Draft');
    set(doc, `${FLOW}/nodes/${INPUT}/step/source`, { namespace: 'ledger', name: 'businessEvent' });
    set(doc, `${FLOW}/nodes/${ENGINE}/step/mapping`, [
      { source: { group: 'INPUT', path: ['amount'] }, target: { path: ['amount'] } },
    ]);
    expect(validateConfiguration(doc)).toMatchObject({ ok: true });
  });

  it('refuses a published flow on a built-in ledger entity: the engine reads those directly', () => {
    const path = `${FLOW}/nodes/${INPUT}/step/source`;
    const errors = errorsAfter((d) => {
      set(d, path, { namespace: 'ledger', name: 'businessEvent' });
      set(d, `${FLOW}/nodes/${ENGINE}/step/mapping`, [
        { source: { group: 'INPUT', path: ['amount'] }, target: { path: ['amount'] } },
      ]);
    });
    expectOnly(errors, path, /a published flow cannot read "ledger\/businessEvent"/);
  });

  it('reports an INPUT mapping path that is not an attribute of the input entity', () => {
    const path = `${FLOW}/nodes/${ENGINE}/step/mapping/2/source/path/0`;
    expectOnly(
      errorsAfter((d) => set(d, path, 'principal')),
      path,
      /"principal" is not an attribute of the input entity "loans\/loanTransaction"/,
    );
  });

  it('reports a SCRIPT mapping path that no upstream Script publishes', () => {
    const path = `${FLOW}/nodes/${ENGINE}/step/mapping/0/source/path/0`;
    expectOnly(
      errorsAfter((d) => set(d, path, 'eventKind')),
      path,
      /outputDefinition of any Script step upstream/,
    );
  });

  it('reports a SCRIPT value published only downstream', () => {
    const errors = errorsAfter((d) => {
      set(d, `${FLOW}/edges`, { [INPUT]: [ENGINE], [ENGINE]: [SCRIPT], [SCRIPT]: [PROCESSOR] });
    });
    expectOnly(errors, `${FLOW}/nodes/${ENGINE}/step/mapping/0/source/path/0`, /upstream/);
  });

  it('reports a mapping target that is not a business event attribute', () => {
    const path = `${FLOW}/nodes/${ENGINE}/step/mapping/6/target/path/0`;
    expectOnly(
      errorsAfter((d) => set(d, path, 'product')),
      path,
      '"product" is not a businessEventDefinition attribute',
    );
  });

  it('refuses a second published flow on the same entity', () => {
    const errors = errorsAfter((d) => {
      const flows = get(d, '/configuration/flows') as unknown[];
      flows.push({ ...(structuredClone(flows[0]) as object), name: 'copy' });
    });
    expectOnly(
      errors,
      '/configuration/flows/1/versionStatus',
      /a second published flow reads "loans\/loanTransaction" \(the first is \/configuration\/flows\/0\)/,
    );
  });

  it('refuses a published flow with a step the Input step does not reach', () => {
    const errors = errorsAfter((d) => set(d, `${FLOW}/edges`, { [INPUT]: [ENGINE], [ENGINE]: [PROCESSOR] }));
    // The script is cut off; the mapping of its output is then also not upstream.
    expect(errors).toContainEqual({
      path: `${FLOW}/nodes/${SCRIPT}`,
      message: 'is not reachable from the Input step, so a published flow would never run it',
    });
  });

  it('refuses a published AccountingEngine step that no JournalProcessor follows', () => {
    const errors = errorsAfter((d) => set(d, `${FLOW}/edges`, { [INPUT]: [SCRIPT], [SCRIPT]: [ENGINE] }));
    expect(errors).toContainEqual({
      path: `${FLOW}/nodes/${ENGINE}/step`,
      message: 'is followed by no JournalProcessor step, so its journals would never be posted',
    });
  });

  it('refuses a published flow without an AccountingEngine step, but keeps such a draft', () => {
    const cut = (d: Record<string, unknown>) => {
      remove(d, `${FLOW}/nodes/${ENGINE}`);
      set(d, `${FLOW}/edges`, { [INPUT]: [SCRIPT], [SCRIPT]: [PROCESSOR] });
    };
    expectOnly(errorsAfter(cut), `${FLOW}/nodes`, /must have an AccountingEngine step/);
    const draft = fixture();
    cut(draft);
    set(draft, '/configuration/flows/0/versionStatus', 'Draft');
    expect(validateConfiguration(draft)).toMatchObject({ ok: true });
  });

  describe('finding 5: flow scripts that could never run are refused at upload', () => {
    const path = `${FLOW}/nodes/${SCRIPT}/step/script`;

    it('a syntax error, with its line and column', () => {
      expectOnly(
        errorsAfter((d) => set(d, path, "const a = 1;\npublish('eventType', a +);")),
        path,
        /^the script does not parse as ECMAScript 2022 at line 2, column 25: Unexpected token$/,
      );
    });

    it('require, process, fetch, timers and console: nothing of the host exists', () => {
      const errors = errorsAfter((d) =>
        set(
          d,
          path,
          "const fs = require('fs');\nprocess.exit(1); fetch('x'); setTimeout(() => 1); console.log(1);",
        ),
      );
      expect(errors.map((e) => e.path)).toEqual(Array(5).fill(path));
      expect(errors[0]?.message).toMatch(
        /^the script uses "require" at line 1, column 12, which does not exist/,
      );
      expect(errors.map((e) => /uses "(\w+)"/.exec(e.message)?.[1])).toEqual([
        'require',
        'process',
        'fetch',
        'setTimeout',
        'console',
      ]);
    });

    it('a misspelt name, while names the script declares itself pass', () => {
      const script =
        'function kind(t) { return t.toLowerCase(); }\nconst { amount } = input;\npublish(kind("x"), amout);';
      expectOnly(
        errorsAfter((d) => set(d, path, script)),
        path,
        /uses "amout" at line 3, column 20/,
      );
    });

    it('also in a draft flow: a configuration holds no script that cannot compile', () => {
      const errors = errorsAfter((d) => {
        set(d, '/configuration/flows/0/versionStatus', 'Draft');
        set(d, path, 'publish(');
      });
      expectOnly(errors, path, /does not parse/);
    });
  });

  it('reports edges that name unknown nodes', () => {
    const unknown = '11111111-2222-4333-8444-555555555555';
    const errors = errorsAfter((d) => {
      set(d, `${FLOW}/edges/${unknown}`, [INPUT]);
      set(d, `${FLOW}/edges/${SCRIPT}/1`, unknown);
    });
    expect(errors).toEqual([
      { path: `${FLOW}/edges/${SCRIPT}/1`, message: expect.stringMatching(/unknown node id/) },
      { path: `${FLOW}/edges/${unknown}`, message: expect.stringMatching(/unknown node id/) },
    ]);
  });
});

describe('flow checks: rules within a flow', () => {
  it('rejects a cyclic flow', () => {
    expectOnly(
      errorsAfter((d) => set(d, `${FLOW}/edges/${PROCESSOR}`, [SCRIPT])),
      `${FLOW}/edges`,
      `must be acyclic: cycle ${SCRIPT} -> ${ENGINE} -> ${PROCESSOR} -> ${SCRIPT}`,
    );
  });

  it('rejects a self loop', () => {
    expectOnly(
      errorsAfter((d) => set(d, `${FLOW}/edges/${INPUT}/1`, INPUT)),
      `${FLOW}/edges`,
      /must be acyclic/,
    );
  });

  it('rejects two Input steps', () => {
    const errors = errorsAfter((d) =>
      set(d, `${FLOW}/nodes/${SCRIPT}/step`, get(d, `${FLOW}/nodes/${INPUT}/step`)),
    );
    expect(errors).toEqual([
      {
        path: `${FLOW}/nodes/${SCRIPT}/step/type`,
        message: 'must contain exactly one Input step, found 2: this is an extra one',
      },
      // The replaced Script step published the event type.
      {
        path: `${FLOW}/nodes/${ENGINE}/step/mapping/0/source/path/0`,
        message: expect.stringMatching(/upstream/),
      },
    ]);
  });

  it('rejects a flow without an Input step', () => {
    expectOnly(
      errorsAfter((d) => set(d, `${FLOW}/nodes/${INPUT}/step`, { type: 'JournalProcessor', name: 'x' })),
      `${FLOW}/nodes`,
      'must contain exactly one Input step, found none',
    );
  });
});
