import { cpus, totalmem } from 'node:os';

/** What a figure was measured on (issue 2, 4, 5: every figure names its machine). */
export interface Machine {
  cpuModel: string;
  cpuCount: number;
  memoryBytes: number;
  nodeVersion: string;
  platform: string;
}

const BYTES_PER_GIB = 1024 ** 3;

/** The machine the benchmark runs on, as Node sees it. */
export function currentMachine(): Machine {
  const all = cpus();
  return {
    cpuModel: all[0]?.model.trim() ?? 'unknown CPU',
    cpuCount: all.length,
    memoryBytes: totalmem(),
    nodeVersion: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

/** One line naming the machine, e.g. `AMD EPYC 7B13 × 2, 23.5 GiB RAM, Node v20.20.2, linux x64`. */
export function describeMachine(machine: Machine): string {
  const memory = (machine.memoryBytes / BYTES_PER_GIB).toFixed(1);
  return `${machine.cpuModel} × ${machine.cpuCount}, ${memory} GiB RAM, Node ${machine.nodeVersion}, ${machine.platform}`;
}

/** The command that was run, as typed: `npm run bench` with the arguments after `--`. */
export function benchCommand(args: readonly string[]): string {
  return args.length === 0 ? 'npm run bench' : `npm run bench -- ${args.join(' ')}`;
}
