# The bot as a container image (docs/operating.md#in-a-container): built from the
# sources as a wheel, as docs/operating.md installs it without a checkout, then installed
# into a slim Python with the PostgreSQL driver. Runs as a user without privileges; the
# state directory (MAFIA_DATA_DIR: the SQLite database when no DATABASE_URL is given,
# the command-sync markers) is a volume.
#
#   docker build -t mafia-bot .
#   docker run --env-file .env -v mafia-data:/var/lib/mafia/data mafia-bot
#
# compose.yaml runs it with PostgreSQL. Not built on the machine the project is tested
# on (no Docker there): tests/test_deploy.py checks what it can without one.

FROM python:3.11-slim AS build
WORKDIR /src
# what the wheel is built from (tests/test_wheel.py SOURCES)
COPY pyproject.toml setup.py README.md bot.py cli.py ./
COPY core core
COPY cogs cogs
COPY archive archive
COPY data/locales data/locales
RUN pip wheel --no-deps --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MAFIA_DATA_DIR=/var/lib/mafia/data
COPY --from=build /wheels /wheels
RUN pip install "$(ls /wheels/mafia_bot-*.whl)[postgres]" && rm -rf /wheels \
    && useradd --system --uid 10001 --user-group --home-dir /var/lib/mafia mafia \
    && mkdir -p /var/lib/mafia/data && chown -R mafia:mafia /var/lib/mafia
USER mafia
WORKDIR /var/lib/mafia
VOLUME ["/var/lib/mafia/data"]
# /healthz and /metrics when METRICS_PORT=9100 and METRICS_HOST=0.0.0.0 (compose.yaml)
EXPOSE 9100
CMD ["mafia-bot", "run"]
