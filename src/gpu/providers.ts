/**
 * The execution providers by name, without onnxruntime: the run config (imported by the workflow bundle,
 * which must not load native code) and the CLI validate against this list. The engine's own list in
 * policy/engine/session.ts must equal it (test/unit/gpu/providers.test.ts).
 */
export const PROVIDER_NAMES = ['cpu', 'cuda', 'webgpu'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];
