# syntax=docker/dockerfile:1.7
# jobs: bulk jobs, their queue in Postgres and pacing; any replica works any job.
# Build from the repository root:  docker build -f docker/jobs.Dockerfile -t bns/jobs:<version> .

# ---- build: compile the two libraries and the service with tsc ------------------------------------
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
ENV PUPPETEER_SKIP_DOWNLOAD=true NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json .npmrc .puppeteerrc.cjs tsconfig.base.json ./
COPY libs/contracts/package.json libs/contracts/
COPY libs/service-kit/package.json libs/service-kit/
COPY services/jobs/package.json services/jobs/
COPY docker/scripts/prune-workspaces.mjs docker/scripts/
RUN node docker/scripts/prune-workspaces.mjs --build libs/contracts libs/service-kit services/jobs \
 && npm install --ignore-scripts --no-audit --no-fund
COPY libs/contracts/ libs/contracts/
COPY libs/service-kit/ libs/service-kit/
COPY services/jobs/ services/jobs/
RUN npx tsc -p libs/contracts/tsconfig.build.json \
 && npx tsc -p libs/service-kit/tsconfig.build.json \
 && npx tsc -p services/jobs/tsconfig.build.json

# ---- prod-deps: production dependencies of this service only -------------------------------------
FROM node:24.21.0-bookworm-slim AS prod-deps
WORKDIR /app
ENV PUPPETEER_SKIP_DOWNLOAD=true NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json .npmrc .puppeteerrc.cjs ./
COPY libs/contracts/package.json libs/contracts/
COPY libs/service-kit/package.json libs/service-kit/
COPY services/jobs/package.json services/jobs/
COPY docker/scripts/prune-workspaces.mjs docker/scripts/
RUN node docker/scripts/prune-workspaces.mjs libs/contracts libs/service-kit services/jobs \
 && npm install --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

# ---- runtime ---------------------------------------------------------------------------------------
FROM node:24.21.0-bookworm-slim AS runtime
ENV NODE_ENV=production PORT=3002
WORKDIR /app
# Everything belongs to root and is only readable by the app user: the process cannot rewrite its code.
COPY --from=prod-deps /app/node_modules node_modules/
COPY --from=build /app/libs/contracts/package.json libs/contracts/
COPY --from=build /app/libs/contracts/dist libs/contracts/dist/
COPY --from=build /app/libs/service-kit/package.json libs/service-kit/
COPY --from=build /app/libs/service-kit/dist libs/service-kit/dist/
COPY --from=build /app/services/jobs/package.json services/jobs/
COPY --from=build /app/services/jobs/dist services/jobs/dist/
COPY docker/scripts/probe.mjs docker/scripts/wait-for.mjs docker/
# The node user of the base image, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 3002
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/docker/probe.mjs", "/healthz"]
# nodeEnv of services/jobs/package.json: glibc hands a freed buffer of 128 KiB or more back to the
# system at once (a fixed threshold: the default one rises with each large buffer freed, and then keeps
# such buffers in its heap), so the RSS comes back after a 50,000-row start.
ENV MALLOC_MMAP_THRESHOLD_=131072
# nodeFlags of services/jobs/package.json: a young generation of at most 3 × 4 MiB, so a
# 50,000-row start's garbage does not grow the process by a hundred megabytes.
CMD ["node", "--max-semi-space-size=4", "services/jobs/dist/main.js"]
