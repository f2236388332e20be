#!/bin/sh
# Entry point of the Docker image: the gateway by default, the `cardline` CLI when the arguments name one
# of its commands (docker run … cardline tenant list), anything else as given (docker run … node -v).
set -e
case "${1:-}" in
  cardline) shift; exec node /app/bin/cardline.js "$@" ;;
  tenant|user|operator-key|keys|approvals|audit|encrypt|login|master-key|file-core|--admin-url|--admin-url=*|help|--help|-h|--version|-V) exec node /app/bin/cardline.js "$@" ;;
  # The demo's memory settings, as `npm run demo` (decision 0389); the gateway keeps Node's defaults.
  --demo) MALLOC_MMAP_THRESHOLD_=131072 exec node --v8-pool-size=1 --max-semi-space-size=2 --max-old-space-size=128 /app/dist/src/server.js "$@" ;;
  mock-core) shift; exec node /app/dist/src/mock-core/main.js "$@" ;;
  "") exec node /app/dist/src/server.js ;;
  *) exec "$@" ;;
esac
