import { ConfigError } from '../errors.ts';

/**
 * RAGEN-2's observation formats (its observation_format; CoordSokoban and CoordFrozenLake use
 * grid_coord): the symbol grid, a list of zero-indexed (row, column) coordinates per kind of entity, or
 * both. The text is RAGEN-2's character for character (format_coordinate_render and _render_text in
 * ragen/env/sokoban and ragen/env/frozen_lake), so prompts match its published settings.
 */
export const OBSERVATION_FORMATS = ['grid', 'coord', 'grid-coord'] as const;
export type ObservationFormat = (typeof OBSERVATION_FORMATS)[number];

/** One line of the coordinate list: a label and the cell indices (row-major) it covers; empty lines are left out. */
export type CoordinateLine = readonly [label: string, cells: readonly number[]];

export function checkObservationFormat(field: string, value: unknown): void {
  if (!OBSERVATION_FORMATS.includes(value as ObservationFormat)) {
    throw new ConfigError(field, `must be one of ${OBSERVATION_FORMATS.join(', ')}, got ${String(value)}`);
  }
}

/** "Board size: 6 rows x 6 cols (zero-indexed).\nWalls: (0, 0), (0, 1), …": cells in ascending (row-major) order. */
export function coordinateText(rows: number, cols: number, lines: readonly CoordinateLine[]): string {
  const out = [`Board size: ${rows} rows x ${cols} cols (zero-indexed).`];
  for (const [label, cells] of lines) {
    if (cells.length === 0) continue;
    const sorted = [...cells].sort((a, b) => a - b);
    out.push(`${label}: ${sorted.map((i) => `(${Math.floor(i / cols)}, ${i % cols})`).join(', ')}`);
  }
  return out.join('\n');
}

/** The observation in `format`, from the grid text and the coordinate text (computed only when needed). */
export function formatObservation(format: ObservationFormat, grid: () => string, coordinates: () => string): string {
  if (format === 'grid') return grid();
  if (format === 'coord') return coordinates();
  return `Coordinates: \n${coordinates()}\nGrid Map: \n${grid()}`;
}

/** The sentence the instruction gains when the observation lists coordinates. */
export function coordinateHint(format: ObservationFormat, rows: number, cols: number, what: string): string {
  if (format === 'grid') return '';
  return (
    ` The state also lists the zero-indexed (row, column) coordinates of ${what}, from the top-left corner ` +
    `(0, 0) to the bottom-right corner (${rows - 1}, ${cols - 1}).`
  );
}
