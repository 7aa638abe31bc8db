"use strict";
fetch("/api/info").then((r) => r.json()).then((info) => {
  document.querySelector("p").textContent = "ultima " + info.version;
});
