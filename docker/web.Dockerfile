# syntax=docker/dockerfile:1.7
# web: the React single-page app as static files behind nginx (unprivileged, port 8080).
# Build from the repository root:
#   docker build -f docker/web.Dockerfile -t bns/web:<version> \
#     --build-arg VITE_CLERK_PUBLISHABLE_KEY=pk_live_... .
# The publishable key is public by design (it is sent to every browser); leave it empty for a build
# that signs in through the gateway's dev issuer (AUTH_MODE=dev, local use only).

# ---- build: contracts, then vite ---------------------------------------------------------------------
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json .npmrc tsconfig.base.json ./
COPY libs/contracts/package.json libs/contracts/
COPY web/package.json web/
COPY docker/scripts/prune-workspaces.mjs docker/scripts/
RUN node docker/scripts/prune-workspaces.mjs --build libs/contracts web \
 && npm install --ignore-scripts --no-audit --no-fund
COPY libs/contracts/ libs/contracts/
COPY web/ web/
ARG VITE_CLERK_PUBLISHABLE_KEY=""
ENV VITE_CLERK_PUBLISHABLE_KEY=${VITE_CLERK_PUBLISHABLE_KEY}
RUN npx tsc -p libs/contracts/tsconfig.build.json \
 && npm run build --workspace web

# ---- runtime: static files only; the Ingress sends the API paths to the gateway ---------------------
FROM nginxinc/nginx-unprivileged:1.28.0-alpine AS runtime
COPY docker/nginx/web.conf /etc/nginx/conf.d/default.conf
COPY --from=build /app/web/dist /usr/share/nginx/html
# nginx-unprivileged runs as uid 101 (nginx); numeric so Kubernetes' runAsNonRoot can verify it.
USER 101:101
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 CMD ["wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/nginx-health"]
