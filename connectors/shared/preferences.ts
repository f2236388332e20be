// What a card's preferences let through, one rule for every simulated core and for the gateway's `effective`
// view (decisions 0010, 0176).
import type { Preferences } from '../../schemas/cards.js';

/** A category's channels, as preferences name them. */
export const PREFERENCE_CHANNELS = ['atm', 'pos', 'ecom', 'contactless'] as const;
export type PreferenceChannel = (typeof PREFERENCE_CHANNELS)[number];
type Category = NonNullable<Preferences['domestic']>;

/**
 * Whether a category lets a channel through: not when switched off or the channel is off; a category
 * naming channels turns off the ones it does not name.
 */
export function channelIsOn(category: Category | undefined, channel: PreferenceChannel): boolean {
  if (category === undefined) return true;
  if (category.enabled === false) return false;
  const named = PREFERENCE_CHANNELS.some((c) => category[c] !== undefined);
  return named ? category[channel]?.enabled === true : true;
}
