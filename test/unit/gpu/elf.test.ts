import assert from 'node:assert/strict';
import { mkdtempSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseLdd, unexpectedMissing } from '../../../src/gpu/ldd.ts';
import { linkPlan, linkProviders } from '../../../src/gpu/links.ts';
import { runpathPlan } from '../../../src/gpu/runpath.ts';

// `ldd node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so` on
// this CPU machine after gpu install.
const LDD_NO_DRIVER = `	linux-vdso.so.1 (0x00007ffd5d3f2000)
	libcublasLt.so.13 => /work/main/.cache/gpu/lib/libcublasLt.so.13 (0x00007f6ae5c00000)
	libcublas.so.13 => /work/main/.cache/gpu/lib/libcublas.so.13 (0x00007f6ae2400000)
	libcurand.so.10 => /work/main/.cache/gpu/lib/libcurand.so.10 (0x00007f6ad9c00000)
	libcudart.so.13 => /work/main/.cache/gpu/lib/libcudart.so.13 (0x00007f6ad9800000)
	libcuda.so.1 => not found
	libdl.so.2 => /lib/x86_64-linux-gnu/libdl.so.2 (0x00007f6b1fa8b000)
	libstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f6ad9400000)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f6ae5a1e000)
	/lib64/ld-linux-x86-64.so.2 (0x00007f6b1faa6000)
`;

test('ldd output parses into resolved paths and missing names; the vDSO and loader lines are skipped', () => {
  const r = parseLdd(LDD_NO_DRIVER);
  assert.equal(r.found.get('libcublasLt.so.13'), '/work/main/.cache/gpu/lib/libcublasLt.so.13');
  assert.equal(r.found.size, 7);
  assert.deepEqual(r.missing, ['libcuda.so.1']);
});

test('only the driver (libcuda.so.1) may be missing: any other missing library is reported', () => {
  assert.deepEqual(unexpectedMissing(parseLdd(LDD_NO_DRIVER)), []);
  const withoutCublas = LDD_NO_DRIVER.replace(
    /libcublas\.so\.13 => \S+ \(0x[0-9a-f]+\)/,
    'libcublas.so.13 => not found',
  );
  assert.deepEqual(unexpectedMissing(parseLdd(withoutCublas)), ['libcublas.so.13']);
});

test('ldd output that lists no library (not an ELF file) is an error naming the file', () => {
  assert.throws(
    () => parseLdd('\tnot a dynamic executable\n', '/x/lib.so'),
    /ldd lists no libraries for \/x\/lib\.so: not a dynamic executable/,
  );
});

test('the RUNPATH is set to the absolute lib directory unless it already is exactly that', () => {
  assert.deepEqual(runpathPlan('', '/c/gpu/lib'), { action: 'set', value: '/c/gpu/lib' });
  assert.deepEqual(runpathPlan('$ORIGIN', '/c/gpu/lib'), { action: 'set', value: '/c/gpu/lib' });
  assert.deepEqual(runpathPlan('/old/checkout/.cache/gpu/lib\n', '/c/gpu/lib'), { action: 'set', value: '/c/gpu/lib' });
  assert.deepEqual(runpathPlan('/c/gpu/lib\n', '/c/gpu/lib'), { action: 'keep' });
});

test('a relative lib directory, or one containing the RUNPATH separator, is refused', () => {
  assert.throws(() => runpathPlan('', '.cache/gpu/lib'), /must be absolute/);
  assert.throws(() => runpathPlan('', '/a:b/gpu/lib'), /contains ':'/);
});

test("a provider's place is linked when empty, kept when it links to the lib, relinked when it links elsewhere, refused when a file", () => {
  assert.equal(linkPlan({ kind: 'missing' }, '/lib/p.so', '/n/p.so'), 'create');
  assert.equal(linkPlan({ kind: 'link', target: '/lib/p.so' }, '/lib/p.so', '/n/p.so'), 'keep');
  assert.equal(linkPlan({ kind: 'link', target: '/moved/lib/p.so' }, '/lib/p.so', '/n/p.so'), 'replace');
  assert.throws(
    () => linkPlan({ kind: 'file' }, '/lib/p.so', '/n/p.so'),
    /\/n\/p\.so is a file starpo did not put there/,
  );
});

test('relinking replaces a link into an old cache with one into the current lib directory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'starpo-links-'));
  writeFileSync(join(dir, 'x'), '');
  symlinkSync('/old/cache/p.so', join(dir, 'p.so'));
  assert.deepEqual(await linkProviders(['p.so'], '/new/lib', dir), { 'p.so': 'replace' });
  assert.equal(readlinkSync(join(dir, 'p.so')), '/new/lib/p.so');
});
