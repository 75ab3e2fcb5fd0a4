// Worker bootstrap: the worker needs TypeScript loading even when the parent registered tsx in-process
// (bin/starpo.js), which workers do not inherit. Registering again where --import tsx already did is harmless.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
