/**
 * Which iterations validate the policy they wrote: every valEvery-th, and the last. One rule for both drivers
 * (the embedded loop and the trainingRun workflow, whose bundle imports this module too, hence no imports).
 */
export function validatesAt(s: { readonly iterations: number; readonly valEvery: number }, i: number): boolean {
  return i === s.iterations || (s.valEvery > 0 && i % s.valEvery === 0);
}
