# Cardline gateway image: compile the TypeScript once, run the compiled JavaScript as a non-root user.
# No tsx (a dev dependency) and no sources in the final image. Build:  docker build -t cardline .
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The SDK and the CLI's bin link are workspaces of the repository: npm ci needs their manifests (and the bin it
# links), the build (gateway, then SDK) the SDK's sources.
COPY sdk/package.json ./sdk/
COPY cli ./cli
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY connectors ./connectors
COPY schemas ./schemas
COPY sdk/tsconfig.json ./sdk/
COPY sdk/src ./sdk/src
# The SDK's generated code is not committed: the build writes it from the operation tables first (decision 0260).
COPY sdk/scripts ./sdk/scripts
COPY scripts ./scripts
# The example connector plugin (examples/acme-core), compiled with the rest: the plugin walk-through runs in the image.
COPY examples/acme-core ./examples/acme-core
# The operations console (/console on the management listener): bundled by esbuild into dist/console.
COPY console ./console
COPY bin/build-console.js ./bin/
# The migrated empty store a new embedded store starts from (dist/store-template/, decision 0107).
COPY bin/store-template.js ./bin/
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
# HOST=0.0.0.0 and CARDLINE_ADMIN_HOST=0.0.0.0: inside a container a published port reaches a listener only on
# all interfaces (the default outside containers is loopback). Publish the management port (8081: the operator
# API and /metrics) on the host's loopback only: -p 127.0.0.1:8081:8081. The embedded store and the demo's
# master key live in the volume.
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 CARDLINE_ADMIN_PORT=8081 CARDLINE_ADMIN_HOST=0.0.0.0 \
    CARDLINE_DATA_DIR=/var/lib/cardline
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
# `cardline …` on the PATH: bin/cardline.js runs dist/src/cli/index.js when there are no sources.
# /app/examples: the compiled example plugin, so that `--connector-module ./examples/acme-core/index.js` works
# from the working directory as in the walk-through (.js here: the image has no TypeScript loader).
RUN ln -s /app/bin/cardline.js /usr/local/bin/cardline \
 && ln -s /app/dist/examples /app/examples \
 && chmod 0755 /app/bin/cardline.js /app/bin/docker-entrypoint.sh \
 && mkdir -p /var/lib/cardline && chown node:node /var/lib/cardline
USER node
VOLUME ["/var/lib/cardline"]
EXPOSE 8080 8081
# Readiness (store, migrations, Redis when configured); start-up (migrations, connectors) gets 30 s.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# No arguments: the gateway. `docker run … cardline tenant list` (or `… cardline cardline tenant list`):
# the CLI. See bin/docker-entrypoint.sh.
ENTRYPOINT ["/app/bin/docker-entrypoint.sh"]
CMD ["node", "dist/src/server.js"]
