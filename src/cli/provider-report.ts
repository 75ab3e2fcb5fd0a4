/** Every provider's status on this machine, as doctor shows it: facts first, then a probe where they allow one. */
import { defaultThreads } from '../policy/engine/session.ts';
import { gatherCudaFacts, loaderFinds } from '../gpu/facts.ts';
import { probeInChild } from '../policy/engine/provider-probe.ts';
import { type ProviderStatus, classifyCpu, classifyCuda, classifyWebgpu, cudaBlocked } from '../gpu/status.ts';

async function cudaStatus(): Promise<ProviderStatus> {
  const facts = gatherCudaFacts(null);
  return cudaBlocked(facts) ?? classifyCuda({ ...facts, probe: await probeInChild('cuda') });
}

export async function providerStatuses(): Promise<ProviderStatus[]> {
  const [cpu, cuda, webgpu] = await Promise.all([probeInChild('cpu'), cudaStatus(), probeInChild('webgpu')]);
  return [
    classifyCpu(cpu, defaultThreads()),
    cuda,
    classifyWebgpu({ vulkanLoader: loaderFinds('libvulkan.so.1'), probe: webgpu }),
  ];
}
