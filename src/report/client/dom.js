/*
 * DOM helpers shared by the report page's scripts (plain browser JavaScript, inlined into the file).
 * Text always goes in through textContent, never innerHTML: responses and tool outputs are model-written.
 */
(function (S) {
  'use strict';

  /** el('div', { class: 'x', 'data-n': 3 }, child, 'text', …) */
  S.el = function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      node.setAttribute(key, String(value));
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  };

  /** A number for people: up to 3 significant decimals, no trailing zeros. */
  S.fmt = function fmt(x, digits) {
    if (x === undefined || x === null || !Number.isFinite(x)) return '–';
    return String(Number(x.toFixed(digits === undefined ? 3 : digits)));
  };

  S.select = function select(id, label, options, value, onChange) {
    const control = S.el('select', { id: id, 'aria-label': label });
    for (const option of options) {
      const selected = String(option.value) === String(value);
      control.append(S.el('option', { value: option.value, selected: selected }, option.label));
    }
    control.addEventListener('change', () => onChange(control.value));
    return S.el('label', { class: 'picker' }, label + ' ', control);
  };
})((window.StarpoReport = window.StarpoReport || {}));
