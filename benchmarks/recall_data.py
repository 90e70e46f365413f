"""The labelled recall set: hand-written lessons and the questions agents would ask about them.

Every query is phrased as an agent meets the problem (a symptom, an error, a task), not in the lesson's words,
and names the file it is working on; its one relevant lesson cites that file as evidence. Each relevant
lesson has a *sibling* citing the same file about something else (so the file alone does not give the answer
away) and most topics have *distractors* that share the query's words but not its meaning. Older versions of
some lessons are superseded, and a few lessons are only proposed; neither may be returned by default.
Template-built lessons (``generated``) fill the set out with plausible, unrelated team knowledge.

The queries and lessons were written before the ranking weights were tuned, and were not edited after
looking at results.
"""

from __future__ import annotations

import random
from typing import NamedTuple


class Lesson(NamedTuple):
    key: str
    files: tuple[str, ...]
    text: str
    applicability: str
    tags: tuple[str, ...]
    kind: str = "Gotcha"
    scope: str = "project"  # project | team | personal
    state: str = "verified"  # verified | proposed | superseded (by the lesson whose key is in ``replaced_by``)
    replaced_by: str | None = None


class Query(NamedTuple):
    text: str  # a whole question, as an agent types it
    file: str  # the file the agent is working on
    relevant: str  # key of the one lesson that answers it
    terms: str  # two or three words, as Beacon's recall skill tells an agent to search


def L(key: str, files: str, text: str, applicability: str = "", tags: str = "", kind: str = "Gotcha",
      scope: str = "project", state: str = "verified", replaced_by: str | None = None) -> Lesson:
    return Lesson(key, tuple(files.split()), text, applicability, tuple(tags.split()), kind, scope, state,
                  replaced_by)


# ------------------------------------------------------------------------------- relevant lessons, queries

RELEVANT = [
    # DB migrations
    L("mig-fake-initial", "app/db/migrations/env.py",
      "Run migrations with --fake-initial on fresh databases created from the schema dump; otherwise the first "
      "migration tries to create tables that are already there.",
      "Setting up a new local or CI database from schema.sql before running migrate.", "migrations database"),
    L("mig-nullable", "app/db/models.py",
      "Every new column on an existing table must be nullable or have a server_default; a NOT NULL column "
      "without a default takes a lock and fails on the populated production table.",
      "Adding fields to SQLAlchemy models that already have rows.", "migrations schema", kind="Convention"),
    L("mig-autogen-compare", "app/db/migrations/env.py alembic.ini",
      "Autogenerate misses changes to server defaults and column types unless compare_type and "
      "compare_server_default are enabled in env.py.",
      "Generating a revision with alembic revision --autogenerate.", "alembic"),
    L("db-session-per-request", "app/db/session.py",
      "Open one session per request and close it in the teardown hook; sharing the module-level session across "
      "threads leaks connections until the pool is exhausted.",
      "Code that talks to the database from request handlers or background threads.", "sqlalchemy connections",
      kind="Correction"),
    L("db-reset-script", "scripts/reset_db.sh",
      "reset_db.sh drops the database named in DATABASE_URL; point it at the local URL explicitly. It once "
      "wiped staging because the shell still had the staging environment loaded.",
      "Resetting a local database.", "database safety", scope="team"),
    # testing
    L("test-freezer-scope", "tests/conftest.py",
      "The freezer fixture patches time only inside the app package; third-party libraries that call "
      "datetime.now still see the real clock.",
      "Tests that depend on the current date or on expiry.", "testing time"),
    L("test-factories", "tests/factories.py",
      "Build test objects with the factories in tests/factories.py, never by inserting rows by hand; the "
      "factories fill required foreign keys and keep tests working when models gain columns.",
      "Writing a new test that needs database rows.", "testing factories", kind="Convention"),
    L("test-random-order", "pytest.ini",
      "Tests run in random order (pytest-randomly). A test that passes alone but fails in the suite usually "
      "depends on state another test left behind; rerun with -p no:randomly or the printed seed to reproduce.",
      "A flaky test that fails only in the full suite or only in CI.", "flaky pytest"),
    L("test-stripe-mock", "tests/e2e/test_checkout.py",
      "The checkout end-to-end test needs the Stripe mock on port 12111; start it with docker compose up "
      "stripe-mock, or the test waits for the full 60 s timeout.",
      "Running e2e tests locally.", "e2e payments"),
    L("test-decimal-money", "tests/test_orders.py",
      "Compare money as Decimal strings in assertions; floats made test_order_total fail on 0.1 + 0.2 style "
      "rounding.", "Assertions on prices, totals or tax.", "testing money", kind="Correction"),
    # build and packaging
    L("build-docker-layers", "docker/Dockerfile",
      "Copy requirements and install them before copying the source tree; otherwise every code change "
      "invalidates the pip layer and image builds take 8 minutes instead of 40 seconds.",
      "Editing the Dockerfile, or wondering why docker builds are slow.", "docker build", scope="team"),
    L("build-pin-deps", "pyproject.toml",
      "Declare direct dependencies with compatible-release ranges in pyproject.toml and regenerate "
      "requirements/lock.txt with make lock; never edit the lock file by hand.",
      "Adding or upgrading a Python dependency.", "dependencies packaging", kind="Convention"),
    L("build-make-tabs", "Makefile",
      "Makefile recipes need tabs, not spaces. The editorconfig forces spaces everywhere except the Makefile, "
      "so check that your editor respects it.",
      "Editing the Makefile and getting 'missing separator'.", "make"),
    L("build-clean-wheel", "build/wheel.sh",
      "Wheels must be built from a clean checkout: stale files under build/lib get packaged, which once shipped "
      "a deleted module. wheel.sh runs git clean -xdf build/ first for that reason.",
      "Building release wheels by hand.", "packaging release"),
    L("build-crypto-routing", "requirements/lock.txt",
      "Upgrades of the pinned cryptography and OpenSSL-related packages go to Dana for review; the FIPS build "
      "depends on their exact versions.",
      "Bumping security-sensitive dependencies.", "dependencies routing", kind="Routing", scope="team"),
    # deploy
    L("deploy-liveness", "deploy/k8s/deployment.yaml",
      "The readiness probe hits /healthz, which checks the database, so during a DB failover every pod goes "
      "unready at once. Liveness must use /livez, which does not touch the database.",
      "Changing probes, or pods restarting during database maintenance.", "kubernetes health"),
    L("deploy-helm-secrets", "deploy/helm/values.yaml",
      "Never put secrets in values.yaml; reference them through externalSecrets so they come from Vault. Values "
      "files are committed and readable by every contractor.",
      "Adding configuration that includes API keys or passwords to a chart.", "secrets helm", kind="Convention",
      scope="team"),
    L("deploy-release-main", "scripts/release.sh",
      "release.sh tags whatever branch is checked out; run it only on main after pulling. A tag made from a "
      "feature branch once deployed unreviewed code to production.", "Cutting a release.", "release"),
    L("deploy-tf-lock", "deploy/terraform/main.tf",
      "terraform apply must hold the shared state lock in the S3 backend; running it with -lock=false while CI "
      "was applying corrupted the state file.", "Applying infrastructure changes by hand.", "terraform"),
    L("deploy-hpa-latency", "deploy/k8s/hpa.yaml",
      "Scale on request latency, not CPU: the workers are I/O bound and CPU stays near 20% while requests queue.",
      "Tuning autoscaling.", "autoscaling", kind="Convention"),
    # auth
    L("auth-jwt-leeway", "app/auth/jwt.py",
      "Tokens are validated with a 30-second leeway; without it, clients whose clocks run slightly ahead got "
      "'token used before issued' errors.", "JWT validation errors that happen only for some users.",
      "jwt auth"),
    L("auth-oauth-redirect", "app/auth/oauth.py",
      "The OAuth redirect URI must match exactly, trailing slash included; Google answers redirect_uri_mismatch "
      "for /callback versus /callback/.", "Setting up a new OAuth provider or environment.", "oauth"),
    L("auth-require-decorator", "app/auth/permissions.py",
      "Check permissions with the require() decorator on the route, not inside the handler; the audit log only "
      "records decisions the decorator makes.", "Adding an endpoint that needs access control.",
      "authorization audit", kind="Convention"),
    L("auth-samesite", "app/auth/cookies.py",
      "The session cookie is SameSite=Lax, so browsers drop it in third-party iframes; the widget embedded on "
      "partner sites needs the separate token flow.", "Login state missing inside embedded frames.", "cookies"),
    L("auth-argon2", "app/auth/passwords.py",
      "Hash passwords with argon2 through passwords.hash(); the old bcrypt helper truncates input at 72 bytes, "
      "so long passphrases matched on their prefix.", "Touching password storage or verification.",
      "security passwords", kind="Correction", scope="team"),
    # caching
    L("cache-version-bump", "app/cache/keys.py",
      "Cache keys carry the settings.CACHE_VERSION prefix; bump it when the shape of a cached object changes, "
      "or old pickles fail to deserialize after a deploy.", "Changing a class or dict that is stored in the cache.",
      "cache"),
    L("cache-kwargs", "app/cache/decorators.py",
      "@cached ignores keyword arguments when it builds the key unless key_kwargs=True; two calls that differed "
      "only in a keyword got the same cached result.", "Caching functions that take keyword arguments.",
      "cache bug"),
    L("cache-redis-ttl", "app/cache/redis.py",
      "Set a TTL on every key: the Redis instance runs with maxmemory-policy noeviction, filled up once, and then "
      "refused every write.", "Writing to Redis directly.", "redis", kind="Convention", scope="team"),
    L("cache-nginx-404", "nginx/nginx.conf",
      "nginx caches 404 responses for one minute, so a newly published page can look missing for up to a minute "
      "after release.", "Pages missing right after publishing.", "nginx cache"),
    L("cache-service-worker", "web/public/sw.js",
      "The service worker serves index.html cache-first, so users keep an old bundle until they close every tab. "
      "Bump CACHE_NAME in sw.js with each release.", "Users still see the old frontend after a deploy.",
      "frontend cache"),
    # CI
    L("ci-cache-stale", ".github/workflows/ci.yml",
      "The CI cache key hashes requirements/lock.txt, but the restore-keys fallback can pick a stale cache; when "
      "jobs keep old packages after the lock changed, clear the cache from the Actions cache page.",
      "CI installing outdated dependencies.", "ci cache"),
    L("ci-fork-secrets", ".github/workflows/release.yml",
      "Secrets are not available to workflows triggered from forks; the release workflow runs only on tags "
      "pushed to this repository.", "Release job failing with empty credentials.", "ci secrets"),
    L("ci-precommit-all", ".pre-commit-config.yaml",
      "Run pre-commit run --all-files after changing hook versions; CI checks all files and fails on formatting "
      "that local incremental runs skipped.", "Updating linters or formatters.", "lint", kind="Convention",
      scope="personal"),
    L("ci-shard-timings", "scripts/ci/shard_tests.py",
      "Test shards are split by the file timings in .ci/timings.json; a new slow test file lands on one shard "
      "and pushes it past the 30 minute job limit until the timings are refreshed.",
      "One CI shard much slower than the others.", "ci performance"),
    L("ci-scheduled-disabled", ".github/workflows/nightly.yml",
      "GitHub disables scheduled workflows after 60 days without repository activity; the nightly job silently "
      "stopped that way in August.", "A nightly run that is not happening.", "ci", scope="team"),
    # logging and observability
    L("log-structured", "app/logging_config.py",
      "Log with structured fields (extra={...}), never f-strings with payloads: the log pipeline drops messages "
      "over 8 KB, and formatted payloads were cut off.",
      "Writing log statements that include request or payment data.", "logging", kind="Convention"),
    L("log-request-id-threads", "app/middleware/request_id.py",
      "The request id lives in a contextvar: tasks started with asyncio.create_task copy it, thread pool work "
      "does not, so logs from run_in_executor have no request id.", "Tracing one request through the logs.",
      "logging async"),
    L("metrics-cardinality", "app/metrics.py",
      "Never use user ids or URLs containing ids as metric labels; label cardinality blew up Prometheus memory. "
      "Label with the route template instead.", "Adding a Prometheus counter or histogram.", "metrics",
      kind="Convention", scope="team"),
    L("tracing-sampling", "app/tracing.py",
      "OpenTelemetry samples 1% of production requests; to trace a specific one, send the header "
      "x-force-trace: 1 from an internal IP.", "Looking for the trace of one request.", "tracing"),
    L("errors-stable-codes", "app/errors.py",
      "Raise AppError subclasses with a stable code; the frontend maps codes to translated messages, so changing "
      "a code breaks them.", "Adding or changing an error returned to clients.", "errors api",
      kind="Convention"),
    # API clients
    L("http-timeout", "app/clients/http.py",
      "The shared HTTP client has no default timeout; always pass timeout=, a hung upstream once blocked every "
      "worker.", "Calling any external service.", "http timeouts", scope="team"),
    L("payments-idempotency", "app/clients/payments.py",
      "Send an Idempotency-Key with every charge: the client retries on timeouts, and without the key a customer "
      "was charged twice.", "Creating charges or refunds.", "payments"),
    L("github-search-limit", "app/clients/github.py",
      "GitHub's search API has its own limit of 30 requests per minute, separate from the 5,000 per hour core "
      "limit; back off on 403 with x-ratelimit-remaining: 0.", "Bulk calls to GitHub search.",
      "github rate-limit"),
    L("email-transactional", "app/clients/email.py",
      "Use the transactional stream for receipts and password resets; the broadcast stream is delayed and "
      "filtered by unsubscribes.", "Sending an email the user needs right away.", "email", kind="Correction"),
    L("geo-lng-lat", "app/clients/geocoding.py",
      "The geocoding vendor returns coordinates as [lng, lat], not [lat, lng]; swapping them put stores in the "
      "ocean.", "Reading coordinates from the geocoder.", "geo", scope="personal"),
    # frontend
    L("fe-vite-proxy", "web/vite.config.ts",
      "The dev server proxies /api to localhost:8000; requests to the full backend URL bypass the proxy and fail "
      "CORS in development.", "Frontend calls to the backend during local development.", "frontend cors"),
    L("fe-datatable-memo", "web/src/components/DataTable.tsx",
      "DataTable re-renders every row when the columns prop is a new array on each render; define columns with "
      "useMemo or outside the component.", "Slow tables or input lag on pages with large tables.",
      "react performance"),
    L("fe-fetcher-csrf", "web/src/api/fetcher.ts",
      "All API calls go through fetcher.ts so the CSRF header and the 401 redirect are handled; calling fetch "
      "directly skips both.", "Adding a frontend call to a new endpoint.", "frontend api", kind="Convention"),
    L("fe-node-20", "web/package.json",
      "Node 20 is required: with Node 18, npm ci succeeds but vite fails with a cryptic 'crypto.hash is not a "
      "function'.", "Setting up the frontend.", "node setup", scope="personal"),
    L("fe-i18n-fallback", "web/src/i18n/index.ts",
      "Translation keys missing from a locale file fall back to English only in production; in development they "
      "render as the raw key, which is expected.", "Raw translation keys showing in the UI.", "i18n"),
    # background jobs
    L("jobs-acks-late", "app/workers/celery_app.py",
      "Tasks are acknowledged late (acks_late=True) so a crashed worker's task is redelivered; tasks must be "
      "idempotent or they run twice.", "Writing a new Celery task.", "celery queues"),
    L("jobs-pass-ids", "app/tasks/reports.py",
      "Pass ids to tasks, not ORM objects; the pickled object is stale by the time the task runs, and it "
      "overwrote newer data.", "Queuing a task about a database row.", "celery", kind="Correction"),
    L("jobs-beat-utc", "app/scheduler.py",
      "Beat schedules are in UTC; a job meant for 9am local time runs at 9am UTC unless the crontab sets a "
      "timezone.", "Scheduling a periodic task.", "scheduling timezone"),
    L("jobs-crm-lock", "app/tasks/sync.py",
      "The CRM sync must not run concurrently: it takes a Redis lock named sync:crm and exits if it cannot get "
      "it. Don't remove the lock to speed it up.", "Changing or triggering the CRM sync.", "locking",
      scope="team"),
    L("jobs-slow-queue", "app/workers/queues.py",
      "Long-running tasks go to the 'slow' queue; a 10-minute report on the default queue delayed every "
      "password reset email.", "Choosing a queue for a new task.", "queues", kind="Convention"),
    # configuration
    L("cfg-reload", "app/settings.py",
      "Settings are read once at import; changing an environment variable in a test needs settings.reload() or "
      "the override_settings fixture.", "Tests or scripts that change environment variables.",
      "settings testing"),
    L("cfg-env-example", ".env.example",
      "Every new setting needs a line in .env.example with a safe default; the onboarding script copies it and "
      "fails on missing keys.", "Adding a configuration option.", "settings onboarding", kind="Convention"),
    L("cfg-compose-host", "docker-compose.yml",
      "Inside docker compose the database host is 'db', not localhost; localhost inside a container is the "
      "container itself.", "Connecting from a container to another service.", "docker", scope="team"),
    L("cfg-flag-cache", "app/feature_flags.py",
      "Feature flags are cached for 60 seconds per process; flipping one takes up to a minute to reach every "
      "worker.", "Toggling a feature flag and not seeing the change.", "feature-flags"),
    L("cfg-cors-exact", "app/cors.py",
      "Allowed origins are exact strings: the middleware does not support wildcards like https://*.example.com, "
      "list each subdomain.", "Adding a frontend domain.", "cors"),
    # search and ETL
    L("search-alias-swap", "app/search/indexer.py",
      "Reindexing writes to a new index and swaps the alias at the end; never reindex in place, searches return "
      "partial results for the 20 minutes it takes.", "Rebuilding the search index.", "search elasticsearch"),
    L("search-match-query", "app/search/query.py",
      "User input goes into a match query, never query_string: query_string parses operators, and a product "
      "name containing a colon and a slash made searches fail with 400.",
      "Building search queries from user input.", "search security"),
    L("etl-cp1252", "app/etl/import_csv.py",
      "Partner CSV files are Windows-1252, not UTF-8; read them with encoding='cp1252' or accented names turn "
      "into garbage.", "Importing partner files.", "etl encoding"),
    L("etl-copy", "app/etl/loader.py",
      "Bulk loads use COPY into a staging table; inserting row by row took 3 hours for the weekly partner file.",
      "Loading large files into Postgres.", "etl performance", kind="Convention"),
]

QUERIES = [
    Query("tests fail with table already exists when setting up a new db", "app/db/migrations/env.py",
          "mig-fake-initial", "table already exists"),
    Query("alembic upgrade crashes in production after I added a mandatory attribute to the order model",
          "app/db/models.py", "mig-nullable", "required field migration"),
    Query("generated revision came out empty even though I changed a varchar length", "app/db/migrations/env.py",
          "mig-autogen-compare", "autogenerate empty revision"),
    Query("getting QueuePool limit of size 5 overflow 10 reached, connection timed out", "app/db/session.py",
          "db-session-per-request", "QueuePool limit"),
    Query("is it safe to wipe my local postgres to start clean", "scripts/reset_db.sh", "db-reset-script",
          "wipe local postgres"),
    Query("my expiry test passes but the token library still thinks it's today even though I froze the date",
          "tests/conftest.py", "test-freezer-scope", "frozen date ignored"),
    Query("what's the right way to create a user and an order inside a test", "tests/factories.py",
          "test-factories", "create test user"),
    Query("test is green when I run it by itself but red when the whole suite runs", "pytest.ini",
          "test-random-order", "test fails suite"),
    Query("e2e checkout test just sits there and times out after a minute", "tests/e2e/test_checkout.py",
          "test-stripe-mock", "checkout test hangs"),
    Query("assert on order total is off by 0.00000001", "tests/test_orders.py", "test-decimal-money",
          "total assertion off"),
    Query("docker image rebuild reinstalls all python packages every time I touch a file", "docker/Dockerfile",
          "build-docker-layers", "docker rebuild slow"),
    Query("how do I add a new library to the project", "pyproject.toml", "build-pin-deps", "add library"),
    Query("make says missing separator. stop. on the line I just added", "Makefile", "build-make-tabs",
          "missing separator"),
    Query("released package still contains a module we removed last week", "build/wheel.sh",
          "build-clean-wheel", "removed module package"),
    Query("who should approve bumping the crypto library version", "requirements/lock.txt",
          "build-crypto-routing", "crypto library bump"),
    Query("all pods got killed and restarted while postgres was failing over", "deploy/k8s/deployment.yaml",
          "deploy-liveness", "pods restarted failover"),
    Query("where should the new third-party api token go for the staging chart", "deploy/helm/values.yaml",
          "deploy-helm-secrets", "api token chart"),
    Query("can I cut the version tag from my branch before merging", "scripts/release.sh", "deploy-release-main",
          "version tag branch"),
    Query("terraform says the state is locked, can I just skip the lock", "deploy/terraform/main.tf",
          "deploy-tf-lock", "terraform state locked"),
    Query("autoscaler never adds replicas even though responses are slow under load", "deploy/k8s/hpa.yaml",
          "deploy-hpa-latency", "autoscaler no replicas"),
    Query("some mobile users get rejected right after logging in, iat claim in the future", "app/auth/jwt.py",
          "auth-jwt-leeway", "iat future rejected"),
    Query("google sign in fails with redirect mismatch on the staging domain", "app/auth/oauth.py",
          "auth-oauth-redirect", "google redirect mismatch"),
    Query("how should a new admin-only endpoint restrict who can call it", "app/auth/permissions.py",
          "auth-require-decorator", "admin only endpoint"),
    Query("user appears logged out when our page is loaded inside a partner's iframe", "app/auth/cookies.py",
          "auth-samesite", "iframe logged out"),
    Query("two different long passphrases both let the user log in", "app/auth/passwords.py", "auth-argon2",
          "passphrase login"),
    Query("after deploying, workers crash unpickling objects read from redis", "app/cache/keys.py",
          "cache-version-bump", "unpickling error"),
    Query("memoized function returns the same data for different filter parameters", "app/cache/decorators.py",
          "cache-kwargs", "memoized same result"),
    Query("redis started answering OOM command not allowed", "app/cache/redis.py", "cache-redis-ttl",
          "redis OOM"),
    Query("just published article shows not found for a while and then appears", "nginx/nginx.conf",
          "cache-nginx-404", "published article not found"),
    Query("customers still see the previous version of the UI after we shipped", "web/public/sw.js",
          "cache-service-worker", "old UI after deploy"),
    Query("pipeline keeps using the previous version of a package I just upgraded", ".github/workflows/ci.yml",
          "ci-cache-stale", "pipeline old package"),
    Query("publishing job fails with missing credentials when triggered from a contributor's pull request",
          ".github/workflows/release.yml", "ci-fork-secrets", "missing credentials pull request"),
    Query("lint passes on my machine but the check fails in the pipeline", ".pre-commit-config.yaml",
          "ci-precommit-all", "lint fails pipeline"),
    Query("one of the parallel test jobs takes twice as long as the rest and hits the timeout",
          "scripts/ci/shard_tests.py", "ci-shard-timings", "parallel job timeout"),
    Query("the nightly build hasn't run for weeks and nobody got an alert", ".github/workflows/nightly.yml",
          "ci-scheduled-disabled", "nightly build not running"),
    Query("log lines with big payloads never show up in kibana", "app/logging_config.py", "log-structured",
          "logs missing kibana"),
    Query("correlation id missing in logs coming from the blocking code we moved to a thread",
          "app/middleware/request_id.py", "log-request-id-threads", "correlation id missing"),
    Query("prometheus memory keeps growing since I added a per-customer counter", "app/metrics.py",
          "metrics-cardinality", "prometheus memory"),
    Query("can't find the trace for the slow request a customer reported", "app/tracing.py", "tracing-sampling",
          "trace not found"),
    Query("is it ok to rename the error identifier returned by the payment endpoint", "app/errors.py",
          "errors-stable-codes", "rename error identifier"),
    Query("requests to a partner hang forever and the worker pool stops responding", "app/clients/http.py",
          "http-timeout", "requests hang"),
    Query("customer reports being billed two times for one purchase", "app/clients/payments.py",
          "payments-idempotency", "billed twice"),
    Query("github calls start failing with 403 after a burst of repository searches", "app/clients/github.py",
          "github-search-limit", "github 403"),
    Query("password reset mails arrive 20 minutes late or not at all for some users", "app/clients/email.py",
          "email-transactional", "reset mail late"),
    Query("map pins show up in the middle of the sea", "app/clients/geocoding.py", "geo-lng-lat",
          "map pins sea"),
    Query("browser blocks my fetch to the backend with an access-control-allow-origin error in npm run dev",
          "web/vite.config.ts", "fe-vite-proxy", "allow-origin error"),
    Query("typing in the search box is laggy on the big customers grid", "web/src/components/DataTable.tsx",
          "fe-datatable-memo", "grid typing lag"),
    Query("post from the new settings page gets rejected with 403 forbidden", "web/src/api/fetcher.ts",
          "fe-fetcher-csrf", "post 403 forbidden"),
    Query("frontend won't start on my laptop, says some hash is not a function", "web/package.json",
          "fe-node-20", "hash not a function"),
    Query("page shows things like checkout.button.submit instead of words", "web/src/i18n/index.ts",
          "fe-i18n-fallback", "keys instead of text"),
    Query("the nightly export sometimes produces duplicate rows after a worker restart",
          "app/workers/celery_app.py", "jobs-acks-late", "duplicate rows restart"),
    Query("background job saved old values over changes the user made a minute earlier", "app/tasks/reports.py",
          "jobs-pass-ids", "job overwrote changes"),
    Query("the morning digest goes out at the wrong hour for our people in California", "app/scheduler.py",
          "jobs-beat-utc", "digest wrong hour"),
    Query("can I trigger the crm import manually while the scheduled one is running", "app/tasks/sync.py",
          "jobs-crm-lock", "crm import manual"),
    Query("where do I route a task that takes several minutes", "app/workers/queues.py", "jobs-slow-queue",
          "route long task"),
    Query("monkeypatching the env var has no effect, the app still uses the old value", "app/settings.py",
          "cfg-reload", "env var ignored"),
    Query("new teammate's setup script fails with KeyError on a variable I added", ".env.example",
          "cfg-env-example", "setup KeyError variable"),
    Query("app container can't reach postgres, connection refused on 127.0.0.1:5432", "docker-compose.yml",
          "cfg-compose-host", "connection refused postgres"),
    Query("I switched the toggle off in the dashboard but some requests still take the new code path",
          "app/feature_flags.py", "cfg-flag-cache", "toggle still on"),
    Query("requests from our new tenant subdomain fail the origin check even though I added a star pattern",
          "app/cors.py", "cfg-cors-exact", "origin subdomain star"),
    Query("after rebuilding product search, results were half empty for a while", "app/search/indexer.py",
          "search-alias-swap", "rebuild search empty"),
    Query("searching for a product name with special characters returns a server error", "app/search/query.py",
          "search-match-query", "special characters search error"),
    Query("customer names with é come out as weird symbols after the import", "app/etl/import_csv.py",
          "etl-cp1252", "names weird symbols"),
    Query("weekly partner import takes hours, how can writing the rows to the database go faster",
          "app/etl/loader.py", "etl-copy", "import takes hours"),
]

# ------------------------------------------------------------------ siblings: same file, different meaning

SIBLINGS = [
    L("sib-env-imports", "app/db/migrations/env.py",
      "env.py imports every model module through app.db.models so autogenerate sees all tables; add new model "
      "modules to that import list.", "Adding a new models file.", "alembic", kind="Convention"),
    L("sib-models-names", "app/db/models.py",
      "Model classes are singular (Order, not Orders) and table names plural snake_case, set explicitly with "
      "__tablename__.", "Defining a new model.", "naming", kind="Convention"),
    L("sib-session-select", "app/db/session.py",
      "Write queries as session.execute(select(...)); the legacy Query API goes away with the SQLAlchemy 2.0 "
      "upgrade.", "Writing new database queries.", "sqlalchemy", kind="Convention"),
    L("sib-reset-seed", "scripts/reset_db.sh",
      "reset_db.sh --seed loads the demo fixtures (three shops, fifty orders) after recreating the schema.",
      "Wanting realistic local data.", "database fixtures"),
    L("sib-conftest-tx", "tests/conftest.py",
      "The db fixture wraps each test in a transaction rolled back at teardown; tests that need committed data "
      "use db_committed.", "Tests that read data from another connection.", "testing database"),
    L("sib-factories-seq", "tests/factories.py",
      "Factories use sequences for emails (user1@example.test, user2@…) so unique constraints never clash "
      "across tests.", "Unique constraint errors in tests.", "testing factories"),
    L("sib-pytest-markers", "pytest.ini",
      "Markers must be registered in pytest.ini; --strict-markers turns a mistyped marker into an error.",
      "Adding a new pytest marker.", "pytest", kind="Convention"),
    L("sib-checkout-cards", "tests/e2e/test_checkout.py",
      "Use the 4242 4242 4242 4242 test card for success and 4000 0000 0000 0002 for a decline in checkout "
      "tests.", "Writing payment tests.", "payments testing", kind="Convention"),
    L("sib-orders-public", "tests/test_orders.py",
      "test_orders.py covers the public API only; pricing rules are tested in tests/unit/test_pricing.py.",
      "Deciding where a new order test goes.", "testing", kind="Routing"),
    L("sib-docker-distroless", "docker/Dockerfile",
      "The runtime image is distroless and has no shell; debug with the :debug variant of the image.",
      "Needing a shell inside the production container.", "docker debugging"),
    L("sib-pyproject-tools", "pyproject.toml",
      "ruff and mypy settings live in pyproject.toml; don't add setup.cfg or tox.ini sections.",
      "Changing lint or type-check settings.", "lint", kind="Convention"),
    L("sib-make-help", "Makefile",
      "make help lists every target; add a ## comment after a new target so it shows up there.",
      "Adding a make target.", "make", kind="Convention"),
    L("sib-wheel-sign", "build/wheel.sh",
      "wheel.sh signs artifacts with the release key from the CI secret; run locally it skips signing and says "
      "so.", "Building wheels outside CI.", "release signing"),
    L("sib-lock-platform", "requirements/lock.txt",
      "lock.txt is generated for Linux x86_64; on macOS install from it with --no-deps.",
      "Installing dependencies on a Mac.", "dependencies macos"),
    L("sib-deploy-resources", "deploy/k8s/deployment.yaml",
      "The api container requests 500m CPU and 512Mi; raising limits without raising requests gets pods evicted "
      "first under pressure.", "Changing container resources.", "kubernetes resources"),
    L("sib-helm-overrides", "deploy/helm/values.yaml",
      "values.yaml holds defaults; per-environment overrides go in values-staging.yaml and values-prod.yaml.",
      "Changing a setting for one environment.", "helm", kind="Convention"),
    L("sib-release-changelog", "scripts/release.sh",
      "release.sh writes the changelog from commit titles; use conventional prefixes (fix:, feat:) or the entry "
      "is dropped.", "Writing commit messages for changes that should be in the changelog.", "release changelog",
      kind="Convention"),
    L("sib-tf-modules", "deploy/terraform/main.tf",
      "Terraform modules are pinned by git tag; bump the ref instead of pointing at main.",
      "Updating a shared terraform module.", "terraform", kind="Convention"),
    L("sib-hpa-min", "deploy/k8s/hpa.yaml",
      "The HPA minimum is 3 replicas in production so a node drain never takes the API below quorum.",
      "Lowering replica counts.", "autoscaling"),
    L("sib-jwt-lifetimes", "app/auth/jwt.py",
      "Access tokens live 15 minutes and refresh tokens 30 days; refresh tokens are rotated on every use.",
      "Questions about session length.", "jwt"),
    L("sib-oauth-clients", "app/auth/oauth.py",
      "OAuth client ids are per environment and come from settings.OAUTH_PROVIDERS, never from code.",
      "Adding a provider.", "oauth settings", kind="Convention"),
    L("sib-perm-roles", "app/auth/permissions.py",
      "Roles are hierarchical: admin implies editor implies viewer; grant only the highest one.",
      "Assigning roles.", "authorization"),
    L("sib-cookies-secure", "app/auth/cookies.py",
      "Cookies get the Secure flag only when settings.HTTPS is true, so local http development keeps working.",
      "Cookie flags in development.", "cookies"),
    L("sib-passwords-reset", "app/auth/passwords.py",
      "Password reset links expire after one hour and work once.", "Support questions about reset links.",
      "passwords"),
    L("sib-keys-format", "app/cache/keys.py",
      "Cache key names use colons as separators: app:entity:id.", "Naming a new cache key.", "cache",
      kind="Convention"),
    L("sib-decorators-pure", "app/cache/decorators.py",
      "@cached is for pure functions only; never wrap anything that reads the current request.",
      "Deciding whether to cache a function.", "cache", kind="Convention"),
    L("sib-redis-pool", "app/cache/redis.py",
      "Use the pool from app.cache.redis.client(); creating Redis() per call exhausts file descriptors.",
      "Connecting to Redis.", "redis"),
    L("sib-nginx-body", "nginx/nginx.conf",
      "The client body limit is 10 MB; upload endpoints raise it in their own location block.",
      "Large uploads rejected with 413.", "nginx uploads"),
    L("sib-sw-dev", "web/public/sw.js",
      "The service worker is disabled on localhost to avoid confusing reloads during development.",
      "Testing offline behaviour locally.", "frontend"),
    L("sib-ci-runner", ".github/workflows/ci.yml",
      "CI runs on ubuntu-22.04, pinned rather than ubuntu-latest, so a runner upgrade never changes the "
      "toolchain under us.", "Changing the CI runner image.", "ci", kind="Convention"),
    L("sib-release-trusted", ".github/workflows/release.yml",
      "release.yml publishes to PyPI with trusted publishing; no API token is stored anywhere.",
      "Questions about PyPI credentials.", "ci release"),
    L("sib-precommit-pins", ".pre-commit-config.yaml",
      "Hooks are pinned by commit hash; a bot opens the monthly autoupdate pull request.",
      "Upgrading a hook.", "lint"),
    L("sib-shard-args", "scripts/ci/shard_tests.py",
      "shard_tests.py takes --shards N and --index I; keep N equal to the matrix size in ci.yml.",
      "Changing the number of CI shards.", "ci"),
    L("sib-nightly-staging", ".github/workflows/nightly.yml",
      "The nightly workflow runs the slow integration tests against a freshly restored staging database.",
      "Wondering where integration tests run.", "ci integration"),
    L("sib-log-levels", "app/logging_config.py",
      "The log level is INFO in production; DEBUG is enabled only for the modules listed in LOG_DEBUG_MODULES.",
      "Needing more detailed logs.", "logging"),
    L("sib-request-id-trust", "app/middleware/request_id.py",
      "Incoming X-Request-ID headers are trusted only from the load balancer; any other value is replaced.",
      "Propagating ids from clients.", "logging security"),
    L("sib-metrics-buckets", "app/metrics.py",
      "Histograms use the shared latency buckets in metrics.BUCKETS so dashboards line up.",
      "Adding a latency histogram.", "metrics", kind="Convention"),
    L("sib-span-names", "app/tracing.py",
      "Span names follow service.operation; dashboards group spans by the prefix.", "Naming spans.", "tracing",
      kind="Convention"),
    L("sib-errors-500", "app/errors.py",
      "Unhandled exceptions become a 500 with code INTERNAL; the traceback goes only to Sentry.",
      "Investigating a 500 response.", "errors"),
    L("sib-http-ua", "app/clients/http.py",
      "The shared client sends a User-Agent with the app version; some partners allow-list it.",
      "A partner blocking our requests.", "http"),
    L("sib-payments-cents", "app/clients/payments.py",
      "Amounts go to the payment provider in minor units (cents) as integers.", "Sending amounts.", "payments",
      kind="Convention"),
    L("sib-github-app", "app/clients/github.py",
      "Call GitHub with the App installation token, never a personal access token.", "Authenticating to GitHub.",
      "github", kind="Convention"),
    L("sib-email-templates", "app/clients/email.py",
      "Email templates live in templates/email and are rendered in the recipient's locale.",
      "Changing an email's wording.", "email i18n"),
    L("sib-geo-cache", "app/clients/geocoding.py",
      "Geocoding results are cached for 30 days per normalized address.", "Geocoding costs.", "geo cache"),
    L("sib-vite-analyze", "web/vite.config.ts",
      "npm run build -- --mode analyze writes stats.html with the bundle breakdown.", "Bundle size questions.",
      "frontend build"),
    L("sib-datatable-paging", "web/src/components/DataTable.tsx",
      "DataTable supports server-side pagination through the onPage prop.", "Tables with many rows.", "react"),
    L("sib-fetcher-retry", "web/src/api/fetcher.ts",
      "fetcher retries idempotent GETs twice with backoff and never retries a POST.", "Retry behaviour.",
      "frontend api"),
    L("sib-npm-only", "web/package.json",
      "Use npm, not yarn or pnpm; the lock file is package-lock.json.", "Installing frontend packages.",
      "node", kind="Convention"),
    L("sib-i18n-locales", "web/src/i18n/index.ts",
      "A new locale needs an entry in SUPPORTED_LOCALES and a flag icon.", "Adding a language.", "i18n"),
    L("sib-celery-broker", "app/workers/celery_app.py",
      "The broker is RabbitMQ; Redis is only the result backend.", "Debugging task delivery.", "celery"),
    L("sib-reports-s3", "app/tasks/reports.py",
      "Reports are written to S3 under reports/yyyy/mm/ with a 7-day presigned link.", "Finding a report file.",
      "reports s3"),
    L("sib-beat-single", "app/scheduler.py",
      "Beat runs as a single replica; scaling it up duplicates every scheduled job.", "Scaling the scheduler.",
      "scheduling"),
    L("sib-sync-watermark", "app/tasks/sync.py",
      "The CRM sync fetches only records changed since the watermark stored in sync_state.",
      "Records missing from the CRM sync.", "crm"),
    L("sib-queues-defined", "app/workers/queues.py",
      "Queue names are defined in queues.py; celery drops tasks routed to an undefined queue.",
      "Adding a queue.", "queues"),
    L("sib-settings-bools", "app/settings.py",
      "Settings are typed with pydantic BaseSettings; booleans accept 1, 0, true and false.",
      "Setting a boolean option.", "settings"),
    L("sib-env-never", ".env.example",
      "Never commit a real .env; it is ignored and a pre-commit hook blocks it.", "Sharing local settings.",
      "security settings"),
    L("sib-compose-volume", "docker-compose.yml",
      "The named volume pgdata keeps the database across restarts; docker compose down -v deletes it.",
      "Losing local data.", "docker"),
    L("sib-flag-naming", "app/feature_flags.py",
      "Flags are named area.feature and removed within two releases after full rollout.",
      "Adding or cleaning up a flag.", "feature-flags", kind="Convention"),
    L("sib-cors-maxage", "app/cors.py",
      "Preflight responses are cached by browsers for 10 minutes (Access-Control-Max-Age).",
      "CORS changes not taking effect immediately.", "cors"),
    L("sib-search-mappings", "app/search/indexer.py",
      "Index mappings are versioned in app/search/mappings/; a mapping change needs a reindex.",
      "Changing a search field.", "search"),
    L("sib-search-boost", "app/search/query.py",
      "Results are boosted by the popularity score the nightly job computes.", "Tuning search ranking.",
      "search"),
    L("sib-csv-rejects", "app/etl/import_csv.py",
      "Rows failing validation go to the import_rejects table with the reason.", "Rows missing after an import.",
      "etl"),
    L("sib-loader-tx", "app/etl/loader.py",
      "The loader runs one transaction per file, so a failed load leaves nothing behind.",
      "A load that failed halfway.", "etl"),
]

# ------------------------------------------------------------- distractors: shared words, other meaning

DISTRACTORS = [
    L("dis-backups", "ops/backup.md", "Database backups run nightly at 02:00 UTC; restoring the main cluster takes "
      "about 40 minutes.", "Planning a restore.", "database backup"),
    L("dis-table-component", "web/src/components/DataTable.tsx",
      "A table component already exists as DataTable; reuse it instead of writing a new one.",
      "Building a page with tabular data.", "frontend", kind="Convention"),
    L("dis-bootstrap", "Makefile", "Fresh clones need make bootstrap before the first test run; it installs git hooks "
      "and sets up the pre-commit environment.", "Setting up a new machine.", "setup"),
    L("dis-orders-archive", "app/db/models.py", "Orders older than 90 days are archived to cold storage by a nightly "
      "job; the API answers 410 for them.", "Old orders missing.", "orders"),
    L("dis-date-picker", "web/src/components/DatePicker.tsx", "The date picker shows dates in the user's time zone; "
      "the API always returns UTC.", "Dates off by hours in the UI.", "frontend dates"),
    L("dis-token-library", "app/auth/jwt.py", "We use PyJWT, not python-jose; the token library was switched after a "
      "security advisory.", "Picking a JWT library.", "jwt dependencies", kind="Convention"),
    L("dis-image-uploads", "app/media/thumbnails.py", "Image uploads are resized by the thumbnail worker; images over "
      "20 MB are rejected.", "Large image uploads failing.", "media"),
    L("dis-new-endpoint-docs", "app/api/openapi.py", "Every time you add a new API endpoint, add it to the OpenAPI "
      "tags list or it will not show in the docs.", "Adding an endpoint.", "api docs", kind="Convention"),
    L("dis-python-version", "pyproject.toml", "Python 3.12 is the only supported version; CI no longer tests 3.10.",
      "Choosing a Python version.", "python"),
    L("dis-pg-upgrades", "ops/postgres.md", "Postgres major upgrades are done by the platform team during the "
      "Sunday maintenance window.", "Wanting a newer Postgres.", "postgres", kind="Routing", scope="team"),
    L("dis-branch-protection", ".github/CODEOWNERS", "Branch protection on main requires two approvals before "
      "merging, one from a code owner.", "Merging a pull request.", "review"),
    L("dis-supervisord", "deploy/supervisord.conf", "Killed workers are restarted by supervisord within five "
      "seconds; a crash loop shows up as FATAL in supervisorctl status.", "Workers restarting.", "workers"),
    L("dis-mobile-signing", "mobile/fastlane/Fastfile", "Mobile release builds are signed in CI; the signing key lives "
      "in the mobile team's vault.", "Signing a mobile build.", "mobile release"),
    L("dis-staging-domain", "deploy/dns.tf", "The staging domain is staging.example.test and its TLS certificate "
      "renews automatically.", "Certificate questions.", "staging dns"),
    L("dis-partner-keys", "app/api/partners.py", "Partner API keys are scoped to one partner and can be rotated from "
      "the admin panel.", "A partner asking for a new key.", "partners api"),
    L("dis-oom-killed", "deploy/k8s/deployment.yaml", "Workers that crash with exit code 137 hit the container memory "
      "limit; look for OOMKilled in kubectl describe.", "Worker pods crashing.", "kubernetes memory"),
    L("dis-articles-markdown", "app/content/render.py", "Articles are stored as Markdown and rendered to HTML when "
      "they are published.", "Formatting problems in articles.", "content"),
    L("dis-filter-validation", "app/api/filters.py", "Search filter parameters are validated with pydantic; unknown "
      "filters are rejected with 422.", "Filter errors from the API.", "api validation"),
    L("dis-etl-pipeline", "app/etl/pipeline.py", "The data import pipeline retries each batch three times before "
      "moving it to the dead-letter bucket.", "Imports losing batches.", "etl"),
    L("dis-pr-template", ".github/pull_request_template.md", "Pull requests need a linked issue; the template checks "
      "for it.", "Opening a pull request.", "review", kind="Convention"),
    L("dis-alerts-channel", "ops/alerting.md", "Alerts go to #ops-alerts; page someone only for customer-facing "
      "outages.", "Deciding whether to page.", "alerts", kind="Convention", scope="team"),
    L("dis-kibana-spaces", "ops/kibana.md", "Kibana dashboards for the checkout funnel are in the growth space; ask "
      "for access in #analytics.", "Looking for checkout dashboards.", "kibana", kind="Routing"),
    L("dis-customer-ids", "app/db/models.py", "Customer ids are UUIDv7, so they sort by creation time.",
      "Ordering customers.", "ids"),
    L("dis-payment-ratelimit", "app/api/payments.py", "The payment endpoint is rate limited to 20 requests per minute "
      "per API key.", "Clients getting 429 from payments.", "payments rate-limit"),
    L("dis-worker-pool-size", "gunicorn.conf.py", "The worker pool size comes from WEB_CONCURRENCY; the default of 4 "
      "is tuned for 2-CPU pods.", "Changing concurrency.", "workers"),
    L("dis-purchase-export", "app/api/exports.py", "Purchase history export is limited to the last 12 months.",
      "Customers asking for older purchases.", "exports"),
    L("dis-map-tiles", "web/src/map/tiles.ts", "Map tiles come from the self-hosted tile server, not Mapbox.",
      "Map not loading.", "frontend map"),
    L("dis-password-rules", "app/auth/validators.py", "Passwords need at least 12 characters; we do not require "
      "symbols.", "Password rule questions.", "passwords"),
    L("dis-search-box-docs", "docs/search.js", "The search box on the docs site uses Algolia; the index is rebuilt "
      "on every docs deploy.", "Docs search out of date.", "docs search"),
    L("dis-grid-export", "web/src/pages/Customers.tsx", "The customers grid exports to CSV, capped at 10,000 rows.",
      "Export truncated.", "frontend export"),
    L("dis-settings-page", "web/src/pages/Settings.tsx", "Changes on the settings page are saved per workspace, not "
      "per user.", "Settings affecting teammates.", "frontend settings"),
    L("dis-duplicate-customers", "app/admin/dedupe.py", "Duplicate rows in the customers table are merged with the "
      "dedupe admin action, never by hand in SQL.", "Duplicate customers.", "data quality", kind="Convention"),
    L("dis-ccpa", "docs/privacy.md", "California customers have CCPA deletion rights; forward requests to the "
      "privacy address.", "Data deletion requests.", "privacy", kind="Routing"),
    L("dis-standup", "docs/team.md", "The morning standup notes live in the team wiki; post blockers before 9:30.",
      "Missing the standup.", "team"),
    L("dis-feature-dashboard", "ops/metabase.md", "The dashboard for feature usage is in Metabase under Product.",
      "Checking whether a feature is used.", "analytics", kind="Routing"),
    L("dis-tenant-schemas", "app/db/tenancy.py", "Tenant data is isolated by schema: each tenant has its own "
      "Postgres schema, created on signup.", "Querying one tenant's data.", "tenancy postgres"),
    L("dis-replica-conn", "app/settings.py", "Connection settings for the read replica are in "
      "settings.DATABASES['replica']; reports read from it.", "Slow reports.", "database settings"),
    L("dis-product-names", "app/catalog/validation.py", "Product names are limited to 120 characters and may not "
      "contain emoji.", "Product creation failing.", "catalog"),
    L("dis-weekly-report", "app/tasks/weekly.py", "The weekly partner report is generated on Mondays at 06:00 and "
      "emailed to account managers.", "Report timing.", "reports"),
    L("dis-lint-rules", ".ruff.toml", "We ignore E501 because the formatter handles line length.",
      "Line length warnings.", "lint"),
    L("dis-redis-sessions", "app/auth/session_store.py", "User sessions are stored in Redis db 1, separate from the "
      "cache in db 0, so flushing the cache does not log anyone out.", "Flushing Redis.", "redis sessions"),
    L("dis-trace-retention", "ops/observability.md", "Traces are kept for 7 days and logs for 30 days.",
      "Looking for old traces.", "tracing logging"),
    L("dis-migration-squash", "app/db/migrations/README.md", "Migrations are squashed once per quarter; do not "
      "edit squashed migrations.", "Old migration files disappearing.", "migrations"),
    L("dis-test-timeouts", "pytest.ini", "Each test has a 120 second timeout from pytest-timeout; mark slow ones "
      "with @pytest.mark.slow.", "A test killed by the timeout.", "pytest"),
    L("dis-docker-login", "docs/onboarding.md", "Run docker login registry.example.test once before pulling "
      "private images.", "Image pull denied.", "docker onboarding"),
]

# ------------------------------------------------------ older versions (superseded) and unreviewed lessons

OLD_VERSIONS = [
    L("old-fake-initial", "app/db/migrations/env.py", "When setting up a fresh database, run migrations with "
      "--fake so existing tables are skipped.", "New database setup.", "migrations", state="superseded",
      replaced_by="mig-fake-initial"),
    L("old-docker-layers", "docker/Dockerfile", "Docker builds are slow because pip reinstalls packages on every "
      "change; use a build cache mount.", "Slow docker builds.", "docker build", state="superseded",
      replaced_by="build-docker-layers"),
    L("old-http-timeout", "app/clients/http.py", "Set timeout=30 on partner requests so a hung partner does not "
      "block workers forever.", "Calling partners.", "http", state="superseded", replaced_by="http-timeout"),
    L("old-flag-cache", "app/feature_flags.py", "Feature flag changes apply immediately to every worker.",
      "Toggling flags.", "feature-flags", state="superseded", replaced_by="cfg-flag-cache"),
    L("old-node-18", "web/package.json", "Node 18 is required for the frontend.", "Frontend setup.", "node",
      state="superseded", replaced_by="fe-node-20"),
]

PROPOSED = [
    L("prop-table-exists", "app/db/migrations/env.py", "If a test database says a table already exists, drop the "
      "test database and let the fixtures recreate it.", "Tests failing on setup.", "testing database",
      state="proposed"),
    L("prop-redis-oom", "app/cache/redis.py", "Redis OOM errors mean the instance is too small; ask ops for a larger "
      "one.", "Redis errors.", "redis", state="proposed"),
    L("prop-pods-restart", "deploy/k8s/deployment.yaml", "Pods restarting during a failover is normal; wait it out.",
      "Pods restarting.", "kubernetes", state="proposed"),
    L("prop-billed-twice", "app/clients/payments.py", "Customers billed twice should be refunded from the Stripe "
      "dashboard.", "Double billing support tickets.", "payments support", state="proposed"),
    L("prop-lint-local", ".pre-commit-config.yaml", "If lint passes locally and fails in CI, upgrade ruff locally.",
      "Lint differences.", "lint", state="proposed"),
    L("prop-env-var", "app/settings.py", "Set environment variables before importing the app in tests.",
      "Environment variables in tests.", "settings testing", state="proposed"),
]

# ------------------------------------------------------------------------------------ template lessons

_AREAS = [
    ("app/billing/invoices.py", "invoice PDFs", "billing"), ("app/billing/tax.py", "tax rates", "billing"),
    ("app/notifications/push.py", "push notifications", "notifications"),
    ("app/notifications/sms.py", "SMS delivery", "notifications"), ("app/uploads/storage.py", "file uploads", "s3"),
    ("app/reports/builder.py", "report generation", "reports"), ("app/api/webhooks.py", "webhook delivery", "api"),
    ("app/api/pagination.py", "list pagination", "api"), ("app/inventory/stock.py", "stock levels", "inventory"),
    ("app/inventory/reservations.py", "stock reservations", "inventory"),
    ("app/shipping/rates.py", "shipping rates", "shipping"), ("app/shipping/labels.py", "shipping labels",
                                                              "shipping"),
    ("app/admin/impersonation.py", "admin impersonation", "admin"), ("app/admin/audit.py", "the audit trail",
                                                                     "audit"),
    ("app/i18n/currency.py", "currency formatting", "i18n"), ("app/analytics/events.py", "analytics events",
                                                              "analytics"),
    ("web/src/pages/Dashboard.tsx", "the dashboard page", "frontend"),
    ("web/src/components/Modal.tsx", "modal dialogs", "frontend"),
    ("web/src/state/store.ts", "client state", "frontend"), ("mobile/src/sync.ts", "offline sync", "mobile"),
]
_PEOPLE = ["Dana", "Eli", "Farah", "Gus", "Hiro", "Ines", "Jonas", "Kai"]
_TEMPLATES = [
    ("Routing", "Questions about {what} go to {person}; they wrote most of {file}.", "Changing {what}."),
    ("Convention", "Changes to {what} need a test in tests/{tag}/ before review; {file} has no integration "
                   "coverage otherwise.", "Touching {what}."),
    ("Gotcha", "{what} runs in the request thread; anything slow in {file} shows up directly in response "
               "times.", "Performance work on {what}."),
    ("Gotcha", "{what} is behind the {tag}.v2 flag in production; the old code path in {file} still serves "
               "most customers.", "Debugging {what} in production."),
    ("Convention", "Log every failure in {what} with the {tag} logger so the on-call dashboard picks it up.",
     "Handling errors in {what}."),
    ("Gotcha", "The staging data for {what} is reset every Monday; don't rely on it for long-running "
               "experiments.", "Testing {what} on staging."),
    ("Decision", "We keep {what} synchronous for now; making it async was tried in the spring and reverted.",
     "Proposals to make {what} asynchronous."),
    ("Convention", "Document public functions in {file} with an example; the {tag} docs are generated from "
                   "them.", "Adding functions to {file}."),
]


def generated(count: int, seed: int = 7) -> list[Lesson]:
    """``count`` template lessons about areas the queries do not ask about (the same ones every run)."""
    rng = random.Random(seed)
    combos = [(a, t) for a in _AREAS for t in _TEMPLATES]
    rng.shuffle(combos)
    out = []
    for n, ((file, what, tag), (kind, text, applicability)) in enumerate(combos[:count]):
        slots = {"what": what, "file": file, "tag": tag, "person": rng.choice(_PEOPLE)}
        out.append(L(f"gen-{n}", file, text.format(**slots)[0].upper() + text.format(**slots)[1:],
                     applicability.format(**slots), tag, kind=kind if kind != "Decision" else "Convention",
                     scope=rng.choice(["project", "project", "team"])))
    return out


def lessons() -> list[Lesson]:
    """Every lesson of the labelled set."""
    return [*RELEVANT, *SIBLINGS, *DISTRACTORS, *OLD_VERSIONS, *PROPOSED, *generated(120)]


def files() -> list[str]:
    """Every path a lesson cites (the benchmark commits each one)."""
    return sorted({f for lesson in lessons() for f in lesson.files})


# ------------------------------------------------------------------- synthetic lessons for the scale run

_COMPONENTS = [
    "the invoice exporter", "the webhook dispatcher", "the billing cron", "the search indexer", "the login form",
    "the signup flow", "the password reset mail", "the admin dashboard", "the orders API", "the stock sync",
    "the shipping label printer", "the tax calculator", "the currency formatter", "the report builder",
    "the CSV importer", "the image resizer", "the PDF renderer", "the notification fan-out", "the SMS sender",
    "the push gateway", "the session store", "the token refresher", "the rate limiter", "the feature flag client",
    "the analytics collector", "the audit trail writer", "the GraphQL gateway", "the mobile sync endpoint",
    "the partner API client", "the geocoder wrapper", "the Redis cache layer", "the Celery beat schedule",
    "the Kafka consumer", "the S3 uploader", "the Terraform staging stack", "the Helm chart", "the nginx config",
    "the Dockerfile for workers", "the CI lint job", "the e2e test suite", "the migration runner",
    "the Postgres read replica", "the Elasticsearch mapping", "the frontend router", "the React table",
    "the Vite build", "the i18n loader", "the service worker", "the OAuth callback", "the JWT middleware",
]
_PROBLEMS = [
    "times out under load", "leaks file descriptors", "double-sends messages", "drops the last batch",
    "returns stale data", "ignores the timezone", "breaks on empty input", "logs secrets in debug mode",
    "retries forever", "deadlocks with the nightly job", "fails silently on network errors",
    "rounds amounts the wrong way", "mixes up tenants", "holds a database lock too long",
    "fills the disk with temp files", "crashes on non-ASCII names", "skips soft-deleted rows",
    "blocks the event loop", "recomputes everything on every call", "uses the wrong locale",
    "exceeds the partner's rate limit", "loses headers on redirect", "writes to the primary instead of replica",
    "forgets to close the cursor", "caches error responses",
]
_ADVICE = [
    "pass an explicit timeout", "wrap it in a transaction", "add an idempotency key", "check the flag first",
    "run it on the slow queue", "pin the version in the lock file", "use the shared client",
    "ask the platform team before changing it", "add a regression test with the failing input",
    "log the request id with every error", "batch the writes", "set a TTL on the key", "read from the replica",
    "normalize to UTC at the boundary", "stream instead of loading everything", "keep the retry count at three",
    "validate the payload with the schema", "document the change in the runbook", "reuse the existing fixture",
    "add an index on the foreign key",
]
_WHEN = [
    "during the month-end close", "on the first deploy of the day", "when a partner sends a large file",
    "after a failover", "in the staging environment", "on Safari", "with more than ten thousand rows",
    "for customers in Asia/Tokyo", "when the cache is cold", "while a migration is running",
    "under the load test profile", "when two workers pick the same job", "after the token expires",
    "for accounts with many projects", "on a fresh checkout",
]
_TEXTS = [
    "{C} {P} {W}; {A}.", "Known issue: {c} {P} {W}. Until it is fixed, {A}.",
    "If {c} {P}, {A}; that fixed it last time.", "{C} {P} only {W}; {A} before blaming the network.",
]


def synthetic(count: int, paths: list[str], labelled_paths: list[str], seed: int = 11) -> list[Lesson]:
    """``count`` varied lessons over the same vocabulary as real ones; a tenth cite a labelled file."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        component = rng.choice(_COMPONENTS)
        slots = {"c": component, "C": component[0].upper() + component[1:], "P": rng.choice(_PROBLEMS),
                 "W": rng.choice(_WHEN), "A": rng.choice(_ADVICE)}
        text = rng.choice(_TEXTS).format(**slots)
        path = rng.choice(labelled_paths) if rng.random() < 0.1 else rng.choice(paths)
        out.append(L(f"syn-{n}", path, text, f"Working on {component} {slots['W']}.",
                     component.split()[-1].lower(), kind=rng.choice(["Gotcha", "Gotcha", "Convention"]),
                     scope=rng.choice(["project", "project", "project", "team"])))
    return out


def synthetic_paths(count: int = 800, seed: int = 13) -> list[str]:
    """Files for the synthetic lessons to cite (the scale run commits them)."""
    rng = random.Random(seed)
    packages = ["billing", "orders", "catalog", "users", "notify", "search", "ingest", "reports", "admin",
                "partners", "geo", "media", "payments", "shipping", "inventory", "analytics"]
    modules = ["api", "models", "service", "tasks", "views", "client", "schemas", "utils", "handlers", "jobs",
               "cache", "repository", "events", "validators", "serializers", "permissions", "signals", "forms"]
    found: dict[str, None] = {}
    while len(found) < count:
        found[f"{rng.choice(['app', 'services', 'lib'])}/{rng.choice(packages)}/{rng.choice(modules)}"
              f"{rng.choice(['', '_v2', '_legacy', '_helpers'])}.py"] = None
    return list(found)
