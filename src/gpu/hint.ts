/**
 * The reason in a provider error: which state this machine is in (status.ts), from facts that need no
 * GPU call. Used by the engine when a session cannot get its provider; there is no CPU fallback.
 */
import { gatherCudaFacts, loaderFinds } from './facts.ts';
import type { ProviderName } from './providers.ts';
import { classifyCuda, classifyWebgpu } from './status.ts';

export function providerHint(provider: ProviderName, cause: unknown): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  try {
    if (provider === 'cuda') return `CUDA provider ${classifyCuda(gatherCudaFacts({ ok: false, message })).detail}`;
    if (provider === 'webgpu')
      return `${classifyWebgpu({ vulkanLoader: loaderFinds('libvulkan.so.1'), probe: { ok: false, message } }).detail}`;
  } catch (err) {
    return `${message} (and checking why failed: ${(err as Error).message})`;
  }
  return message;
}
