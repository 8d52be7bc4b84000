// whatsapp-web.js pulls puppeteer; we drive the system Chromium (CHROMIUM_PATH), never a downloaded one.
module.exports = { skipDownload: true };
