import { StarpoError } from '../../errors.ts';

/**
 * A Sokoban level as flat typed arrays: cell index = row * width + col. The structure (walls,
 * floor, targets) never changes; boxes and the player are the state.
 */
export const WALL = 0;
export const FLOOR = 1;
export const TARGET = 2;

export interface SokobanLevel {
  width: number;
  height: number;
  /** WALL | FLOOR | TARGET per cell. */
  cells: Uint8Array;
  /** Box cell indices. */
  boxes: number[];
  player: number;
}

/** The seven symbols of a rendering, in one vocabulary. */
export interface SokobanSymbols {
  wall: string;
  floor: string;
  target: string;
  box: string;
  boxOnTarget: string;
  player: string;
  playerOnTarget: string;
}

export const VOCABULARIES = {
  /** RAGEN's symbols. */
  standard: { wall: '#', floor: '_', target: 'O', box: 'X', boxOnTarget: '√', player: 'P', playerOnTarget: 'S' },
  /** Re-vocabulary variant: same game, other symbols (tests whether the agent reads the legend). */
  alternative: { wall: 'W', floor: '.', target: 'G', box: 'C', boxOnTarget: 'B', player: 'A', playerOnTarget: '@' },
} as const satisfies Record<string, SokobanSymbols>;

export type SokobanVocabulary = keyof typeof VOCABULARIES;

export function legendOf(symbols: SokobanSymbols): Array<[string, string]> {
  return [
    [symbols.wall, 'wall'],
    [symbols.floor, 'floor'],
    [symbols.target, 'target'],
    [symbols.box, 'box'],
    [symbols.boxOnTarget, 'box on target'],
    [symbols.player, 'player'],
    [symbols.playerOnTarget, 'player on target'],
  ];
}

/** Rows of symbols for a state; `boxAt[i]` is non-zero where a box stands. */
export function renderRows(level: SokobanLevel, boxAt: Uint8Array, player: number, s: SokobanSymbols): string[] {
  const rows: string[] = [];
  for (let r = 0; r < level.height; r++) {
    let row = '';
    for (let c = 0; c < level.width; c++) {
      const i = r * level.width + c;
      const cell = level.cells[i];
      const onTarget = cell === TARGET;
      if (i === player) row += onTarget ? s.playerOnTarget : s.player;
      else if (boxAt[i]) row += onTarget ? s.boxOnTarget : s.box;
      else row += cell === WALL ? s.wall : onTarget ? s.target : s.floor;
    }
    rows.push(row);
  }
  return rows;
}

/** Rows of the level's initial state in `symbols` (default: standard). */
export function levelRows(level: SokobanLevel, symbols: SokobanSymbols = VOCABULARIES.standard): string[] {
  const boxAt = new Uint8Array(level.cells.length);
  for (const b of level.boxes) boxAt[b] = 1;
  return renderRows(level, boxAt, level.player, symbols);
}

/** Parses rows of symbols (hand-written levels, snapshots). Exactly one player is required. */
export function parseLevel(rows: readonly string[], symbols: SokobanSymbols = VOCABULARIES.standard): SokobanLevel {
  const grid = rows.map((row) => Array.from(row));
  const height = grid.length;
  const width = grid[0]?.length ?? 0;
  const cells = new Uint8Array(width * height);
  const boxes: number[] = [];
  let player = -1;
  for (let r = 0; r < height; r++) {
    const row = grid[r] ?? [];
    if (row.length !== width)
      throw new StarpoError(`sokoban level: row ${r} has ${row.length} cells, expected ${width}`);
    for (let c = 0; c < width; c++) {
      const ch = row[c];
      const i = r * width + c;
      const onTarget = ch === symbols.target || ch === symbols.boxOnTarget || ch === symbols.playerOnTarget;
      cells[i] = ch === symbols.wall ? WALL : onTarget ? TARGET : FLOOR;
      if (ch === symbols.box || ch === symbols.boxOnTarget) boxes.push(i);
      if (ch === symbols.player || ch === symbols.playerOnTarget) {
        if (player >= 0) throw new StarpoError('sokoban level: more than one player');
        player = i;
      }
      if (!Object.values(symbols).includes(ch as never)) throw new StarpoError(`sokoban level: unknown symbol "${ch}"`);
    }
  }
  if (player < 0) throw new StarpoError('sokoban level: no player');
  for (let i = 0; i < cells.length; i++) {
    const border = i < width || i >= width * (height - 1) || i % width === 0 || i % width === width - 1;
    if (border && cells[i] !== WALL) throw new StarpoError('sokoban level: the border must be wall');
  }
  const targets = cells.reduce((n, cell) => n + (cell === TARGET ? 1 : 0), 0);
  if (targets !== boxes.length) throw new StarpoError(`sokoban level: ${boxes.length} boxes but ${targets} targets`);
  return { width, height, cells, boxes, player };
}
