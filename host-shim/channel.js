// @ts-check
// A channel is {provider, model}, and either part may hold a "/": the joined
// text would make {a/b, c} and {a, b/c} one channel. So channels are
// compared and recorded as objects; "provider/model" is for people (log
// lines, commands, the page), and a typed "provider/model" is split at its
// FIRST slash (providers name no slash; models may: org/model/v2).

/** @import { Channel } from './policy-types.js' */

/**
 * A channel as a record names it: its two parts, nothing else.
 * @param {Channel} c
 */
export const channelId = (c) => ({ provider: c.provider, model: c.model });

/**
 * "provider/model", for people.
 * @param {{provider: string, model: string}} c
 */
export const channelText = (c) => `${c.provider}/${c.model}`;

/**
 * Whether two optional channels are the same channel (both absent counts).
 * @param {{provider: string, model: string} | null | undefined} a
 * @param {{provider: string, model: string} | null | undefined} b
 */
export const sameChannel = (a, b) => (!a && !b) || (!!a && !!b && a.provider === b.provider && a.model === b.model);

/**
 * A typed "provider/model" as a channel; undefined when either part is empty.
 * @param {string} text
 * @returns {{provider: string, model: string} | undefined}
 */
export function parseChannel(text) {
  const slash = text.indexOf('/');
  if (slash <= 0 || slash === text.length - 1) return undefined;
  return { provider: text.slice(0, slash), model: text.slice(slash + 1) };
}
