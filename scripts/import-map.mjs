#!/usr/bin/env node
// The import map of the tree, folder by folder, in the layer order of eslint.config.js: one line per folder with
// the folders it imports from (and how many imports), then every import against the layering and every cycle.
// Exit status 1 when there is one (lint refuses the same: `starpo/layers`, `starpo/no-cycle`).
//   node scripts/import-map.mjs
import { LAYERS } from '../eslint.config.js';
import { importGraph, layerOf, pathBetween } from '../eslint-rules/layering.js';

const graph = importGraph();
const folderOf = (file) => {
  const layer = layerOf(LAYERS, file);
  if (layer === undefined) return undefined;
  if (/^src\/[^/]+$/.test(file)) return 'src/*.ts';
  if (!layer.prefix.endsWith('/')) return layer.prefix;
  // A top-level src/ folder, or the layer's own prefix for everything else.
  const m = /^src\/[^/]+\//.exec(file);
  return m && layer.prefix.startsWith('src/') ? m[0] : layer.prefix;
};

const edges = new Map();
const upward = [];
for (const [from, targets] of graph) {
  const a = folderOf(from);
  if (a === undefined) continue;
  for (const to of targets) {
    const b = folderOf(to);
    if (b === undefined || a === b) continue;
    const key = `${a}\t${b}`;
    edges.set(key, (edges.get(key) ?? 0) + 1);
    if (layerOf(LAYERS, to).index > layerOf(LAYERS, from).index) upward.push(`${from} → ${to}`);
  }
}

const folders = [...new Set([...graph.keys()].map(folderOf).filter((f) => f !== undefined))];
const rank = (folder) => layerOf(LAYERS, folder === 'src/*.ts' ? 'src/errors.ts' : folder).index;
folders.sort((x, y) => rank(x) - rank(y));
for (const folder of folders) {
  const out = [...edges]
    .filter(([key]) => key.startsWith(`${folder}\t`))
    .map(([key, n]) => `${key.split('\t')[1]} ${n}`);
  console.log(`${folder.padEnd(22)} → ${out.join(', ') || '(nothing)'}`);
}

const cycles = new Set();
for (const [from, targets] of graph) {
  for (const to of targets) {
    const back = pathBetween(graph, to, from);
    if (back) cycles.add([from, ...back].join(' → '));
  }
}
console.log(`\nimports against the layering: ${upward.length}`);
for (const line of upward) console.log(`  ${line}`);
console.log(`import cycles: ${cycles.size}`);
for (const line of cycles) console.log(`  ${line}`);
process.exit(upward.length + cycles.size > 0 ? 1 : 0);
