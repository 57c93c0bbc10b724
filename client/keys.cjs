// Keyboard use of the chip's menu. The host's Menu renders its items as
// buttons in a portal at the end of <body> and closes on Escape, but moves no
// focus: from the chip, Tab would walk the page, not the menu. So while our
// menu is open, focus goes to its chosen item (else the first), the arrow
// keys, Home and End move between items, and on close focus returns to the
// chip, as in a native menu button. Focus moves in only when the menu was
// opened from the keyboard: moving it under a pointer scrolls the list while
// the user is about to click in it.
'use strict';

const { react } = require('./shell.cjs');

/** @import { RefObject } from 'react' */

const OURS = '[data-testid=dsh-resilience-menu-item], [data-testid=dsh-resilience-dock], [data-dshr-option]';

/** The open menu list that holds our items, if any. */
function ourMenu() {
  for (const m of Array.from(document.querySelectorAll('[role=menu]'))) if (m.querySelector(OURS)) return m;
  return undefined;
}

/**
 * The menu's enabled items (the Menu renders them as buttons).
 * @param {Element} menu
 */
function items(menu) {
  return /** @type {HTMLButtonElement[]} */ (Array.from(menu.querySelectorAll('[role=menuitem]'))).filter((b) => !b.disabled);
}

/**
 * Whether a click came from the keyboard (Enter or Space on a button gives a click of detail 0).
 * @param {{detail: number} | undefined} e
 */
function fromKeyboard(e) {
  return !!e && e.detail === 0;
}

/**
 * @param {boolean} open
 * @param {RefObject<HTMLElement | null>} chipRef - what has focus back on close
 * @param {RefObject<boolean>} [byKeyboard] - whether the menu was opened from the keyboard (else: always)
 */
function useMenuKeys(open, chipRef, byKeyboard) {
  const React = react();
  const wasOpen = React.useRef(false);
  React.useEffect(() => {
    if (typeof document === 'undefined') return undefined;
    if (!open) {
      // Back to the chip when the menu closed with focus in it (or lost to <body>).
      const a = document.activeElement;
      if (wasOpen.current && chipRef.current && (!a || a === document.body || !a.isConnected)) chipRef.current.focus();
      wasOpen.current = false;
      return undefined;
    }
    wasOpen.current = true;
    let frame = 0;
    let tries = 0;
    const focusFirst = () => {
      const m = ourMenu();
      const list = m ? items(m) : [];
      // Wait for the Menu to place itself (it is hidden until then).
      if (!m || !list.length || getComputedStyle(m).visibility === 'hidden') {
        if (tries++ < 30) frame = requestAnimationFrame(focusFirst);
        return;
      }
      const chosen = list.find((b) => b.getAttribute('aria-checked') === 'true' || /selected/.test(b.className));
      (chosen || list[0]).focus();
    };
    if (!byKeyboard || byKeyboard.current) frame = requestAnimationFrame(focusFirst);
    /** @param {KeyboardEvent} e */
    const onKey = (e) => {
      const m = ourMenu();
      if (!m || !m.contains(document.activeElement)) return;
      const list = items(m);
      const i = list.indexOf(/** @type {HTMLButtonElement} */ (document.activeElement));
      let next;
      if (e.key === 'ArrowDown') next = list[(i + 1) % list.length];
      else if (e.key === 'ArrowUp') next = list[(i - 1 + list.length) % list.length];
      else if (e.key === 'Home') next = list[0];
      else if (e.key === 'End') next = list[list.length - 1];
      else if (e.key === 'Tab') { e.preventDefault(); next = list[(i + (e.shiftKey ? -1 : 1) + list.length) % list.length]; }
      if (next) { e.preventDefault(); next.focus(); }
    };
    document.addEventListener('keydown', onKey);
    return () => { cancelAnimationFrame(frame); document.removeEventListener('keydown', onKey); };
  }, [open]);
}

module.exports = { useMenuKeys, fromKeyboard };
