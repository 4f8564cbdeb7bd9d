# syntax=docker/dockerfile:1
# Node 26, the current LTS line: the Node of package.json's engines and of its `node` devDependency,
# on which the tests, npm start and every npm script run.
FROM node:26-trixie-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# npm ci needs every workspace's manifest (the CLI package: neither built nor shipped here).
COPY packages/cli/package.json ./packages/cli/package.json
RUN npm ci --no-audit --no-fund
COPY nest-cli.json .swcrc tsconfig.json tsconfig.build.json ormconfig.ts ./
COPY scripts ./scripts
COPY migrations ./migrations
COPY src ./src
ARG SERVICE_COMMIT=unknown
ENV SERVICE_COMMIT=$SERVICE_COMMIT
# The production build: the service alone (no tools/, so no App Attest fabricator: the CLI's
# attest:demo-* commands are for development installs; no command-line client). Then the production
# tree: no dev tools and no embedded PostgreSQL (a dev dependency): a cluster sets DATABASE_URL.
RUN npm run build:production && npm prune --omit=dev

FROM node:26-trixie-slim
ENV NODE_ENV=production PORT=3000 DATA_DIR=/data
WORKDIR /app
RUN mkdir -p /data && chown node:node /data
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=build --chown=node:node /app/package.json ./package.json
COPY --from=build --chown=node:node /app/src/attestation/app-attest/apple-app-attestation-root-ca.pem ./src/attestation/app-attest/apple-app-attestation-root-ca.pem
# The image's `node` user by number, so Kubernetes can verify runAsNonRoot without a runAsUser.
USER 1000:1000
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/health').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node", "dist/src/main.js"]
