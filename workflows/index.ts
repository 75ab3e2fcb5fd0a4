// The workflows a starpo worker registers (its workflowsPath); signals and queries for clients.
export { trainingRun, pauseSignal, resumeSignal, stopSignal, progressQuery } from './training-run.ts';
