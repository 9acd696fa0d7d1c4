// The sandbox USSD handset: a phone screen over /sandbox/api, which runs the real USSD service verbs as
// the sandbox demo organization. No build step, no dependencies.
(() => {
  const MAX_SCREEN = 182;
  const FINAL = new Set(['SUCCESS', 'FAILED', 'CANCELLED']);
  const POLL_MS = 1000;
  const $ = (id) => document.getElementById(id);
  const screen = $('screen');
  const input = $('input');
  const counter = $('counter');
  const customer = $('customer');
  const state = { sessionId: null, typed: '', busy: false, poll: null };
  // Webhook events (WEBHOOKS_PREVIEW only, which the server writes on <body>): the ids present when
  // the page opened are not listed.
  const events = { on: document.body.dataset.webhooksPreview === 'true', baseline: null };

  async function call(method, url, body) {
    const response = await fetch(url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let json = {};
    try {
      json = await response.json();
    } catch {}
    return { status: response.status, body: json };
  }

  /** `ussd` marks a screen from the menus, whose length counts against the handset's 182 characters. */
  function show(text, ussd = false) {
    screen.textContent = text;
    counter.textContent = ussd ? `${text.length}/${MAX_SCREEN}` : '';
    screen.scrollTop = 0;
  }

  function showError(body) {
    const details = Array.isArray(body.details) ? body.details.map((d) => d.message).join('\n') : '';
    show(['Error', body.message || details || body.error || 'The request failed'].join('\n'));
  }

  function setTyped(value) {
    state.typed = value.slice(0, 10);
    input.textContent = state.typed;
  }

  function setBusy(busy) {
    state.busy = busy;
    for (const button of document.querySelectorAll('button')) button.disabled = busy;
    document.body.dataset.busy = busy ? 'true' : 'false';
  }

  async function loadCustomers() {
    const { status, body } = await call('GET', '/sandbox/api/customers');
    if (status !== 200) {
      customer.innerHTML = '<option>No demo customers</option>';
      showError(body);
      return;
    }
    $('organization').textContent = body.organization.name;
    customer.innerHTML = '';
    for (const c of body.data) {
      const option = document.createElement('option');
      option.value = c.id;
      option.textContent = `${c.firstName} ${c.lastName} · ${c.msisdn ?? 'no phone number'}`;
      customer.append(option);
    }
    customer.disabled = false;
    document.body.dataset.ready = 'true';
    void refreshInbox();
  }

  /** Lists the events emitted since the page opened; with the preview off the panel stays hidden. */
  async function refreshEvents() {
    if (!events.on) return;
    const { status, body } = await call('GET', '/sandbox/api/events');
    if (status !== 200) return;
    if (events.baseline === null) {
      events.baseline = new Set(body.data.map((e) => e.eventId));
      $('events').hidden = false;
    }
    const fresh = body.data.filter((e) => !events.baseline.has(e.eventId));
    $('events-empty').hidden = fresh.length > 0;
    $('event-list').replaceChildren(
      ...fresh.map((e) => {
        const item = document.createElement('li');
        item.dataset.eventId = e.eventId;
        const name = document.createElement('code');
        name.textContent = e.event;
        const id = document.createElement('small');
        id.textContent = e.eventId;
        item.append(name, id);
        return item;
      }),
    );
  }

  /** The SMS sent to the picked customer's number (the sandbox inbox), newest first. */
  async function refreshInbox() {
    if (!customer.value || customer.disabled) return;
    const { status, body } = await call('GET', `/sandbox/api/sms/${encodeURIComponent(customer.value)}`);
    if (status !== 200) return;
    // Shown once the number has an SMS: the page is unchanged until then.
    $('inbox').hidden = body.data.length === 0;
    $('sms-list').replaceChildren(
      ...body.data.map((sms) => {
        const item = document.createElement('li');
        item.dataset.smsId = sms.id;
        const text = document.createElement('p');
        text.textContent = sms.text;
        const when = document.createElement('small');
        when.textContent = `${new Date(sms.sentAt).toLocaleTimeString()} · ${sms.state}`;
        item.append(text, when);
        return item;
      }),
    );
  }

  function onScreen(body) {
    show(body.data.ussdText, true);
    state.sessionId = body.data.menu.isEndState ? null : body.data.sessionId;
    document.body.dataset.state = body.data.currentState;
    if (body.orderId) watchPayment(body.orderId);
    void refreshEvents();
  }

  async function dial() {
    stopPolling();
    $('payment').hidden = true;
    const { status, body } = await call('POST', '/sandbox/api/ussd/session', { customerId: customer.value });
    if (status === 200 || status === 201) onScreen(body);
    else showError(body);
  }

  async function send() {
    if (state.busy) return;
    setBusy(true);
    try {
      if (!state.sessionId) {
        await dial();
      } else {
        const choice = state.typed;
        setTyped('');
        const { status, body } = await call('POST', '/sandbox/api/ussd/process', {
          sessionId: state.sessionId,
          choice,
        });
        if (status === 200) onScreen(body);
        else {
          if (status === 400 && /expired|no longer active/.test(body.message ?? '')) state.sessionId = null;
          showError(body);
        }
      }
    } catch {
      show('Connection problem\nor invalid MMI code.');
    } finally {
      setBusy(false);
    }
  }

  function end() {
    state.sessionId = null;
    setTyped('');
    document.body.dataset.state = 'ENDED';
    show('Session ended.\nPress Send to dial again.');
  }

  function stopPolling() {
    if (state.poll) clearTimeout(state.poll);
    state.poll = null;
  }

  function watchPayment(orderId) {
    stopPolling();
    $('payment').hidden = false;
    $('order-id').textContent = orderId;
    const status = $('payment-status');
    status.textContent = 'PENDING';
    status.className = 'status PENDING';
    $('payment-amount').textContent = '';
    const poll = async () => {
      const { status: code, body } = await call(
        'GET',
        `/sandbox/api/payment/status/${encodeURIComponent(orderId)}`,
      );
      const transaction = code === 200 ? (body.data.payment ?? body.data.disbursement) : undefined;
      if (transaction) {
        status.textContent = transaction.status;
        status.className = `status ${transaction.status}`;
        $('payment-amount').textContent =
          `${transaction.currency} ${transaction.amount} · ${transaction.provider}`;
        void refreshEvents();
        if (FINAL.has(transaction.status)) return;
      }
      state.poll = setTimeout(poll, POLL_MS);
    };
    void poll();
  }

  for (const key of document.querySelectorAll('.keypad button')) {
    key.addEventListener('click', () => setTyped(state.typed + key.dataset.key));
  }
  $('send').addEventListener('click', () => void send());
  $('clear').addEventListener('click', () => setTyped(state.typed.slice(0, -1)));
  $('end').addEventListener('click', end);
  customer.addEventListener('change', () => {
    end();
    void refreshInbox();
  });
  // SMS arrive after the move that caused them (a payment settles later): look every few seconds.
  setInterval(() => void refreshInbox(), 3 * POLL_MS);
  document.addEventListener('keydown', (event) => {
    if (event.target instanceof HTMLSelectElement || event.ctrlKey || event.metaKey || event.altKey) return;
    if (/^[0-9A-Za-z*#]$/.test(event.key)) setTyped(state.typed + event.key);
    else if (event.key === 'Backspace') setTyped(state.typed.slice(0, -1));
    else if (event.key === 'Enter') void send();
    else if (event.key === 'Escape') end();
    else return;
    event.preventDefault();
  });

  show('Pick a customer and press Send to dial.');
  void loadCustomers();
  void refreshEvents();
})();
