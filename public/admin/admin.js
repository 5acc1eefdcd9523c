// Small enhancements of the server-rendered pages: copy buttons, sortable and filterable tables,
// confirmation of dangerous buttons, charts of the dashboard. Everything works without it too,
// except copying and charts. Loaded from the service itself (the CSP allows no inline script).
'use strict';

function setUpCopyButtons(root) {
  for (const button of root.querySelectorAll('button[data-copy]')) {
    button.addEventListener('click', async () => {
      const source = document.getElementById(button.dataset.copy);
      const status = button.parentElement.querySelector('.copied');
      try {
        await navigator.clipboard.writeText(source.textContent.trim());
        if (status) status.textContent = 'Copied.';
      } catch {
        const range = document.createRange();
        range.selectNodeContents(source);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        if (status) status.textContent = 'Selected: press Ctrl+C to copy.';
      }
    });
  }
}

function cellValue(row, index) {
  // An amount carries its stored value (`<data value>`), so "1,234.50 EUR" sorts as 1234.50.
  const data = row.cells[index]?.querySelector('data[value]');
  const text = data ? data.value : (row.cells[index]?.textContent.trim() ?? '');
  const number = Number(text.replace(/,/g, ''));
  return text !== '' && Number.isFinite(number) ? number : text.toLowerCase();
}

function setUpSortableTables(root) {
  for (const table of root.querySelectorAll('table[data-sortable]')) {
    const headers = [...table.tHead.rows[0].cells];
    headers.forEach((th, index) => {
      if (th.textContent.trim() === '') return;
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = th.textContent;
      // Only the rows shown are sorted; the list's order across pages is fixed by the server.
      button.title = `Sort the rows of this page by ${th.textContent.trim()}`;
      th.textContent = '';
      th.append(button);
      th.setAttribute('aria-sort', 'none');
      button.addEventListener('click', () => {
        const ascending = th.getAttribute('aria-sort') !== 'ascending';
        for (const other of headers) other.setAttribute('aria-sort', 'none');
        th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
        const body = table.tBodies[0];
        const rows = [...body.rows].sort((a, b) => {
          const x = cellValue(a, index);
          const y = cellValue(b, index);
          const order = x < y ? -1 : x > y ? 1 : 0;
          return ascending ? order : -order;
        });
        body.append(...rows);
      });
    });
  }
  for (const input of root.querySelectorAll('input[data-filter-table]')) {
    input.addEventListener('input', () => {
      const table = document.getElementById(input.dataset.filterTable);
      const needle = input.value.trim().toLowerCase();
      for (const row of table.tBodies[0].rows) {
        row.hidden = needle !== '' && !row.textContent.toLowerCase().includes(needle);
      }
    });
  }
}

function setUpFileToTextarea(root) {
  for (const input of root.querySelectorAll('input[type="file"][data-into]')) {
    input.addEventListener('change', async () => {
      const file = input.files?.[0];
      if (file) document.getElementById(input.dataset.into).value = await file.text();
    });
  }
}

// The characters of a text as the API counts them (code points): an emoji is one character,
// where the browser's maxlength counts two UTF-16 units.
function charactersOf(text) {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

// Fields bounded in characters (data-max-chars, data-min-chars): the browser refuses a value
// the API would refuse, with the count; below a text area (a reason) a counter says how many
// characters it has.
function setUpCharacterLimits(root) {
  for (const field of root.querySelectorAll('[data-max-chars]')) {
    const max = Number(field.dataset.maxChars);
    const min = Number(field.dataset.minChars ?? 0);
    let counter;
    if (field.tagName === 'TEXTAREA') {
      counter = document.createElement('small');
      counter.className = 'char-count';
      field.insertAdjacentElement('afterend', counter);
    }
    const check = () => {
      const value = field.hasAttribute('data-trimmed') ? field.value.trim() : field.value;
      const count = charactersOf(value);
      let message = '';
      if (count > max) message = `At most ${max} characters: this has ${count}.`;
      else if (count > 0 && count < min) message = `At least ${min} characters: this has ${count}.`;
      field.setCustomValidity(message);
      if (counter) {
        counter.textContent = `${count} of ${max} characters`;
        counter.classList.toggle('over', message !== '');
      }
    };
    field.addEventListener('input', check);
    check();
  }
}

function setUp(root) {
  setUpCopyButtons(root);
  setUpSortableTables(root);
  setUpFileToTextarea(root);
  setUpCharacterLimits(root);
}

document.addEventListener('DOMContentLoaded', () => setUp(document));
document.addEventListener('htmx:afterSwap', (event) => setUp(event.target));
