// Drives rocketmq-dashboard's pages in headless Chromium (the system browser,
// through playwright-core) and writes what each page showed as JSON, plus a
// screenshot per page. It checks nothing itself: EcosystemToolsTest compares
// the texts with the workload it made, so this script stays a plain recorder.
//
//   DASHBOARD_URL  http://127.0.0.1:<port>       CHROMIUM  /usr/bin/chromium (default)
//   TOPIC, GROUP, KEY, MSG_ID                      what to look up
//   SHOTS_DIR      where the PNGs go              RESULT    the JSON file to write
//   TRACE_TOPIC_OF_MSG, TRACE_MSG_ID, TRACE_PRODUCER  optional: a traced message for the MessageTrace page
//
// Run with NODE_PATH=<dir>/node_modules (build.sh installs playwright-core there).
'use strict';

const fs = require('fs');
const path = require('path');
const {chromium} = require('playwright-core');

const env = (k, d) => {
    const v = process.env[k] || d;
    if (v === undefined) {
        console.error(`dashboard.cjs: ${k} is not set`);
        process.exit(2);
    }
    return v;
};
const base = env('DASHBOARD_URL');
const topic = env('TOPIC');
const group = env('GROUP');
const key = env('KEY');
const msgId = env('MSG_ID');
const shots = env('SHOTS_DIR');
const resultPath = env('RESULT');
const STEP_TIMEOUT = 60000;

const result = {};

// step runs one page: fn's return value (texts) or its error, and a screenshot either way.
async function step(page, name, fn) {
    const started = Date.now();
    try {
        result[name] = {ok: true, ...(await fn())};
    } catch (e) {
        result[name] = {ok: false, error: String(e && e.message || e).split('\n').slice(0, 6).join('\n')};
    }
    result[name].millis = Date.now() - started;
    try {
        await page.screenshot({path: path.join(shots, `dashboard-${name}.png`), fullPage: false});
    } catch (e) {
        result[name].screenshotError = String(e);
    }
    console.error(`dashboard.cjs: ${name}: ${result[name].ok ? 'ok' : result[name].error} (${result[name].millis} ms)`);
}

const rowsOf = async (scope) => scope.locator('.ant-table-tbody tr.ant-table-row').allInnerTexts();
const visibleModal = (page) => page.locator('.ant-modal-content:visible').last();

// closeModal clicks the dialog's close button (Escape is lost when the dialog has no
// focus yet) and waits for its mask to go, which would otherwise swallow the next click.
async function closeModal(page) {
    const close = page.locator('.ant-modal-close:visible').last();
    if (await close.count()) {
        await close.click().catch(() => page.keyboard.press('Escape'));
    } else {
        await page.keyboard.press('Escape');
    }
    await page.locator('.ant-modal-mask:visible').first().waitFor({state: 'hidden', timeout: 15000}).catch(() => {});
}

// selectTopic picks a value in the antd Select (showSearch) of the active tab pane.
async function selectTopic(page, pane, name = topic) {
    await pane.locator('.ant-select').first().click();
    await page.keyboard.type(name);
    await page.locator(`.ant-select-dropdown:visible .ant-select-item-option[title="${name}"]`).first().click();
}

(async () => {
    fs.mkdirSync(shots, {recursive: true});
    const browser = await chromium.launch({
        executablePath: env('CHROMIUM', '/usr/bin/chromium'),
        headless: true,
        // Root in a container: no user namespaces for Chromium's sandbox.
        args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    });
    const page = await browser.newPage({viewport: {width: 1600, height: 1000}});
    page.setDefaultTimeout(STEP_TIMEOUT);
    const consoleErrors = [];
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));

    await step(page, 'cluster', async () => {
        await page.goto(`${base}/#/cluster`);
        await page.locator('.ant-table-tbody tr.ant-table-row').nth(2).waitFor();
        return {rows: await rowsOf(page)};
    });

    await step(page, 'topic', async () => {
        await page.goto(`${base}/#/topic`);
        // A topic without a message.type attribute is UNSPECIFIED; the page lists only NORMAL by default.
        await page.getByLabel('UNSPECIFIED', {exact: true}).check();
        await page.locator('#deployHistoryList input.ant-input').first().fill(topic);
        const row = page.locator('.ant-table-tbody tr.ant-table-row', {hasText: topic}).first();
        await row.waitFor();
        return {rows: await rowsOf(page)};
    });

    await step(page, 'topic-status', async () => {
        const row = page.locator('.ant-table-tbody tr.ant-table-row', {hasText: topic}).first();
        await row.getByRole('button', {name: 'Status', exact: true}).click();
        const modal = visibleModal(page);
        await modal.locator('.ant-table-tbody tr.ant-table-row').first().waitFor();
        const out = {rows: await rowsOf(modal)};
        return out;
    });
    await closeModal(page);

    await step(page, 'topic-route', async () => {
        const row = page.locator('.ant-table-tbody tr.ant-table-row', {hasText: topic}).first();
        await row.getByRole('button', {name: 'Router', exact: true}).click();
        const modal = visibleModal(page);
        await modal.locator('.ant-table-tbody tr.ant-table-row').first().waitFor();
        return {text: await modal.innerText()};
    });
    await closeModal(page);

    await step(page, 'consumer', async () => {
        await page.goto(`${base}/#/consumer`);
        await page.locator('input[placeholder="输入订阅组名称"]').fill(group);
        const row = page.locator('.ant-table-tbody tr.ant-table-row', {hasText: group}).first();
        await row.waitFor();
        const cells = await row.locator('td').allInnerTexts();
        const headers = await page.locator('.ant-table-thead th').allInnerTexts();
        return {headers, cells};
    });

    await step(page, 'consumer-client', async () => {
        const row = page.locator('.ant-table-tbody tr.ant-table-row', {hasText: group}).first();
        await row.getByRole('button', {name: 'CLIENT', exact: true}).click();
        const modal = visibleModal(page);
        await modal.locator('.ant-table-tbody tr.ant-table-row').first().waitFor();
        return {text: await modal.innerText()};
    });
    await closeModal(page);

    await step(page, 'consumer-detail', async () => {
        const row = page.locator('.ant-table-tbody tr.ant-table-row', {hasText: group}).first();
        await row.getByRole('button', {name: 'CONSUME DETAIL', exact: true}).click();
        const modal = visibleModal(page);
        await modal.locator('.ant-table-tbody tr.ant-table-row').first().waitFor();
        return {text: await modal.innerText()};
    });
    await closeModal(page);

    await step(page, 'message-key', async () => {
        await page.goto(`${base}/#/message`);
        await page.getByRole('tab', {name: 'Message Key'}).click();
        const pane = page.locator('.ant-tabs-tabpane-active');
        await selectTopic(page, pane);
        await pane.locator('input.ant-input').first().fill(key);
        await pane.getByRole('button', {name: /Search/}).click();
        const row = pane.locator('.ant-table-tbody tr.ant-table-row', {hasText: key}).first();
        await row.waitFor();
        return {rows: await rowsOf(pane)};
    });

    await step(page, 'message-detail', async () => {
        const pane = page.locator('.ant-tabs-tabpane-active');
        const row = pane.locator('.ant-table-tbody tr.ant-table-row', {hasText: key}).first();
        await row.getByRole('button', {name: 'Message Detail', exact: true}).click();
        const modal = visibleModal(page);
        await modal.getByText('eco-body-', {exact: false}).first().waitFor();
        return {text: await modal.innerText()};
    });
    await closeModal(page);

    await step(page, 'message-id', async () => {
        await page.getByRole('tab', {name: 'Message ID'}).click();
        const pane = page.locator('.ant-tabs-tabpane-active');
        await pane.locator('input.ant-input').first().fill(msgId);
        await pane.getByRole('button', {name: /Search/}).click();
        const modal = visibleModal(page);
        await modal.getByText(msgId, {exact: false}).first().waitFor();
        await modal.getByText('eco-body-', {exact: false}).first().waitFor();
        return {text: await modal.innerText()};
    });
    await closeModal(page);

    if (process.env.TRACE_MSG_ID) {
        await step(page, 'message-trace', async () => {
            await page.goto(`${base}/#/messageTrace`);
            await page.getByRole('tab', {name: 'Message ID'}).click();
            const pane = page.locator('.ant-tabs-tabpane-active');
            await selectTopic(page, pane, env('TRACE_TOPIC_OF_MSG'));
            await pane.locator('input.ant-input').first().fill(process.env.TRACE_MSG_ID);
            await pane.getByRole('button', {name: /Search/}).click();
            const row = pane.locator('.ant-table-tbody tr.ant-table-row', {hasText: process.env.TRACE_MSG_ID}).first();
            await row.getByRole('button', {name: 'Message Trace Detail', exact: true}).click();
            // Not an antd Modal: a fixed overlay whose box holds this heading.
            const modal = page.getByRole('heading', {name: 'Message Trace Detail'}).locator('..');
            await modal.waitFor();
            const deadline = Date.now() + STEP_TIMEOUT;
            // The fields are read-only <input>s, whose values innerText leaves out: read both.
            const want = [process.env.TRACE_MSG_ID, env('TRACE_PRODUCER')];
            const read = async () => (await modal.innerText()) + '\n' +
                (await modal.locator('input').evaluateAll((els) => els.map((e) => e.value))).join('\n');
            let text = await read();
            while (!want.every((w) => text.includes(w)) && Date.now() < deadline) {
                await page.waitForTimeout(500);
                text = await read();
            }
            return {text};
        });
    }

    result.consoleErrors = consoleErrors.slice(0, 20);
    await browser.close();
    fs.writeFileSync(resultPath, JSON.stringify(result, null, 2));
})().catch((e) => {
    console.error('dashboard.cjs:', e);
    fs.writeFileSync(resultPath, JSON.stringify({fatal: String(e), ...result}, null, 2));
    process.exit(1);
});
