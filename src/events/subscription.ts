// Which channels hear an event, as SQL: the one rule the audit writer (whether an event is pending at all), the
// delivery worker (fanning an event out to its channels) and a replay (a channel's events again) all apply.

/** SQL: the `channel` row lists `eventType` or `*`; enabled-ness and the tenant are the caller's join. */
export const subscribesSql = (channel: string, eventType: string): string =>
  `(${channel}.event_types @> '["*"]'::jsonb OR ${channel}.event_types @> jsonb_build_array(${eventType}))`;
