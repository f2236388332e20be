// Cards as the gateway shows them: built field by field, so that nothing else a connector returns (the
// `sensitive` block, the expiry) can reach a response. PAN, CVV and expiry leave only encrypted (DESIGN §4).
import type { CardDetails, CardSummary } from '../../connectors/contract.js';
import { maskPan } from '../../connectors/shared/pan.js';
import { PREFERENCE_CHANNELS, channelIsOn } from '../../connectors/shared/preferences.js';
import type { Preferences } from '../../schemas/cards.js';
import type { CardDetailsView, CardView } from '../../schemas/card-lifecycle-routes.js';

export function toCardView(card: CardSummary): CardView {
  const view: CardView = {
    cardId: card.cardId,
    entityId: card.entityId,
    form: card.form,
    state: card.state,
    // The connector already masks; masking again means one that got it wrong cannot leak a number.
    panMasked: maskPan(card.panMasked),
  };
  if (card.fulfilment !== undefined) view.fulfilment = card.fulfilment;
  if (card.kitNo !== undefined) view.kitNo = card.kitNo;
  if (card.blockReason !== undefined) view.blockReason = card.blockReason;
  return view;
}

export function toCardDetailsView(card: CardDetails): CardDetailsView {
  const view: CardDetailsView = toCardView(card);
  if (card.plasticCode !== undefined) view.plasticCode = card.plasticCode;
  if (card.preferences !== undefined) view.preferences = card.preferences;
  return view;
}

/** Preferences as applied: an off category disables its channels (0010); one naming channels disables the rest (0176). */
export function effectivePreferences(preferences: Preferences): Preferences {
  const effective = structuredClone(preferences);
  for (const category of [effective.domestic, effective.international]) {
    if (!category) continue;
    const named = PREFERENCE_CHANNELS.some((channel) => category[channel] !== undefined);
    for (const channel of PREFERENCE_CHANNELS) {
      const c = category[channel];
      if (c && !channelIsOn(category, channel)) c.enabled = false;
      else if (!c && named) category[channel] = { enabled: false };
    }
  }
  return effective;
}
