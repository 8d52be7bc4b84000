# syntax=docker/dockerfile:1.7
# contacts: the contact book, segments and the inbox.
# Build from the repository root:  docker build -f docker/contacts.Dockerfile -t bns/contacts:<version> .

# ---- build: compile the two libraries and the service with tsc ------------------------------------
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
ENV PUPPETEER_SKIP_DOWNLOAD=true NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json .npmrc .puppeteerrc.cjs tsconfig.base.json ./
COPY libs/contracts/package.json libs/contracts/
COPY libs/service-kit/package.json libs/service-kit/
COPY services/contacts/package.json services/contacts/
COPY docker/scripts/prune-workspaces.mjs docker/scripts/
RUN node docker/scripts/prune-workspaces.mjs --build libs/contracts libs/service-kit services/contacts \
 && npm install --ignore-scripts --no-audit --no-fund
COPY libs/contracts/ libs/contracts/
COPY libs/service-kit/ libs/service-kit/
COPY services/contacts/ services/contacts/
RUN npx tsc -p libs/contracts/tsconfig.build.json \
 && npx tsc -p libs/service-kit/tsconfig.build.json \
 && npx tsc -p services/contacts/tsconfig.build.json

# ---- prod-deps: production dependencies of this service only -------------------------------------
FROM node:24.21.0-bookworm-slim AS prod-deps
WORKDIR /app
ENV PUPPETEER_SKIP_DOWNLOAD=true NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json .npmrc .puppeteerrc.cjs ./
COPY libs/contracts/package.json libs/contracts/
COPY libs/service-kit/package.json libs/service-kit/
COPY services/contacts/package.json services/contacts/
COPY docker/scripts/prune-workspaces.mjs docker/scripts/
RUN node docker/scripts/prune-workspaces.mjs libs/contracts libs/service-kit services/contacts \
 && npm install --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

# ---- runtime ---------------------------------------------------------------------------------------
FROM node:24.21.0-bookworm-slim AS runtime
ENV NODE_ENV=production PORT=3006
WORKDIR /app
# Everything belongs to root and is only readable by the app user: the process cannot rewrite its code.
COPY --from=prod-deps /app/node_modules node_modules/
COPY --from=build /app/libs/contracts/package.json libs/contracts/
COPY --from=build /app/libs/contracts/dist libs/contracts/dist/
COPY --from=build /app/libs/service-kit/package.json libs/service-kit/
COPY --from=build /app/libs/service-kit/dist libs/service-kit/dist/
COPY --from=build /app/services/contacts/package.json services/contacts/
COPY --from=build /app/services/contacts/dist services/contacts/dist/
COPY docker/scripts/probe.mjs docker/scripts/wait-for.mjs docker/
# The node user of the base image, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 3006
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/docker/probe.mjs", "/healthz"]
CMD ["node", "services/contacts/dist/main.js"]
