import type { Command } from 'commander';
import { registerBench } from './bench.ts';
import { registerDashboard } from './dashboard.ts';
import { registerDoctor } from './doctor.ts';
import { registerReport } from './report.ts';
import { registerServices } from './services.ts';
import { registerTrain } from './train.ts';
import { registerSft } from './sft.ts';
import { registerReplay } from './replay.ts';
import { registerResume } from './resume.ts';
import { registerEval } from './eval.ts';
import { registerExport } from './export.ts';
import { registerWorker } from './worker.ts';
import { registerStatus } from './status.ts';
import { registerDurable } from './durable.ts';
import { registerGpu } from './gpu.ts';
import { registerGateway } from './gateway.ts';
import { registerModels } from './models.ts';

/** Every `starpo` subcommand, registered in one place. Each module adds its command(s) to the program. */
export const COMMANDS: ReadonlyArray<(program: Command) => void> = [
  registerTrain,
  registerSft,
  registerServices,
  registerDoctor,
  registerBench,
  registerReport,
  registerDashboard,
  registerReplay,
  registerResume,
  registerEval,
  registerExport,
  registerWorker,
  registerStatus,
  registerDurable,
  registerGpu,
  registerGateway,
  registerModels,
];
