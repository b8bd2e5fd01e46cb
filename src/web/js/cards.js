// Cards: codes as the API writes them (`QS`, `10D`, `AH`), their order in a hand, their
// faces (SVG, drawn here: no image files), and the pass rule a selection must obey.

import { t } from './i18n.js';

/** @typedef {import('leekha-api').components['schemas']['CardCode']} CardCode */
/** @typedef {import('leekha-api').components['schemas']['LegalActionsViewPass']} LegalPass */

/** Suits in hand order: colours alternate so neighbouring suits are told apart. */
export const SUITS = /** @type {const} */ (['S', 'H', 'C', 'D']);
/** Ranks from low to high. */
export const RANKS = ['2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A'];
const SYMBOL = { S: '♠', H: '♥', C: '♣', D: '♦' };

/**
 * @param {string} code
 * @returns {{rank: string, suit: 'S' | 'H' | 'C' | 'D'}}
 */
export function parse(code) {
  const suit = /** @type {'S' | 'H' | 'C' | 'D'} */ (code.slice(-1));
  return { rank: code.slice(0, -1), suit };
}

/**
 * The hand sorted by suit, then by rank (low to high).
 * @param {readonly CardCode[]} hand
 * @returns {CardCode[]}
 */
export function sortHand(hand) {
  const key = (/** @type {string} */ c) => {
    const { rank, suit } = parse(c);
    return SUITS.indexOf(suit) * 100 + RANKS.indexOf(rank);
  };
  return [...hand].sort((a, b) => key(a) - key(b));
}

/**
 * A card as a short text with its suit's symbol ("Q♠", "10♦"), for logs and summaries.
 * @param {string} code
 */
export function cardShort(code) {
  const { rank, suit } = parse(code);
  return `${rank}${SYMBOL[suit]}`;
}

/**
 * A card's name for screen readers, in the page's language ("Queen of spades").
 * @param {string} code
 */
export function cardName(code) {
  const { rank, suit } = parse(code);
  return t('card', { rank: t(`rank.${rank}`), suit: t(`suit.${suit}`) });
}

const SVG = 'http://www.w3.org/2000/svg';

/**
 * @param {string} tag
 * @param {Record<string, string | number>} attrs
 * @param {string} [text]
 */
function svg(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/**
 * A card face, 60 × 84 units, scaled by CSS. Decorative: the button around it carries the
 * card's name.
 * @param {string} code
 * @returns {SVGSVGElement}
 */
export function cardFace(code) {
  const { rank, suit } = parse(code);
  const root = /** @type {SVGSVGElement} */ (svg('svg', { viewBox: '0 0 60 84', class: `face suit-${suit}` }));
  root.setAttribute('aria-hidden', 'true');
  root.append(
    svg('rect', { x: 1, y: 1, width: 58, height: 82, rx: 6, class: 'paper' }),
    svg('text', { x: 6, y: 18, class: 'rank' }, rank),
    svg('text', { x: 6, y: 32, class: 'pip' }, SYMBOL[suit]),
    svg('text', { x: 30, y: 60, class: 'big', 'text-anchor': 'middle' }, SYMBOL[suit]),
  );
  if (code === 'QS' || code === '10D') root.classList.add('danger');
  return root;
}

/** The back of a card, for the other seats' hands. */
export function cardBack() {
  const root = svg('svg', { viewBox: '0 0 60 84', class: 'face back' });
  root.setAttribute('aria-hidden', 'true');
  root.append(svg('rect', { x: 1, y: 1, width: 58, height: 82, rx: 6, class: 'paper' }),
    svg('rect', { x: 7, y: 7, width: 46, height: 70, rx: 4, class: 'weave' }));
  return root;
}

/**
 * Whether 3 distinct cards are a legal pass: each one not in `may_empty_suit` must leave a
 * card of its suit in the hand (API.md, "Deciding a pass from the view").
 * @param {readonly string[]} pass
 * @param {readonly string[]} hand
 * @param {LegalPass} legal
 */
export function isLegalPass(pass, hand, legal) {
  if (pass.length !== legal.count || new Set(pass).size !== pass.length) return false;
  if (!pass.every((c) => legal.cards.includes(/** @type {CardCode} */ (c)))) return false;
  return pass.every((c) => {
    if (legal.may_empty_suit.includes(/** @type {CardCode} */ (c))) return true;
    const suit = parse(c).suit;
    const left = hand.filter((h) => parse(h).suit === suit && !pass.includes(h));
    return left.length > 0;
  });
}

/**
 * The cards that may join the selection so that it can still end as a legal pass: a
 * selection built only from these can never become illegal. 13 cards make 286 triples, so
 * trying every completion is cheap and exact.
 * @param {readonly string[]} selected
 * @param {readonly string[]} hand
 * @param {LegalPass} legal
 * @returns {Set<string>}
 */
export function passableNext(selected, hand, legal) {
  const open = new Set();
  if (selected.length >= legal.count) return open;
  const cards = legal.cards.filter((c) => !selected.includes(c));
  for (let i = 0; i < cards.length; i++) {
    for (let j = i; j < cards.length; j++) {
      for (let k = j; k < cards.length; k++) {
        const extra = [...new Set([cards[i], cards[j], cards[k]])];
        if (extra.length !== legal.count - selected.length) continue;
        if (isLegalPass([...selected, ...extra], hand, legal)) extra.forEach((c) => open.add(c));
      }
    }
  }
  return open;
}
