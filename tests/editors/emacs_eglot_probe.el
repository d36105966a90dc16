;;; emacs_eglot_probe.el --- drive eglot + hlo-lsp in batch mode  -*- lexical-binding: t -*-
;; Used by tests/editors/test_nvim.py after loading the eglot configuration block of
;; editors/other-clients.md. Same spec as nvim_probe.lua ($HLO_PROBE_SPEC, JSON):
;; opens `main' (the first argument file), hovers and jumps to the definition, opens
;; `broken' and waits for flymake diagnostics, opens each `sniff' file and records its
;; major mode (and a hover when asked). Writes the result JSON to the spec's `out'.
(require 'json)
(require 'eglot)
(require 'flymake)

(defvar probe-timeout (/ (string-to-number (or (getenv "HLO_PROBE_TIMEOUT") "60000")) 1000.0))
(defvar probe-spec (let ((json-object-type 'alist) (json-array-type 'list) (json-key-type 'symbol))
                     (json-read-file (getenv "HLO_PROBE_SPEC"))))
(defvar probe-errors nil)

(defun probe-wait (pred)
  "Run the event loop until PRED is non-nil or the timeout passes; return PRED's value."
  (let ((deadline (+ (float-time) probe-timeout)) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.1))
    v))

(defun probe-connect ()
  "Start eglot for the current buffer (eglot-ensure waits for a command loop batch mode lacks)."
  (unless (eglot-current-server)
    (apply #'eglot (eglot--guess-contact)))
  (and (probe-wait #'eglot-current-server) t))

(defun probe-goto (pos)
  (goto-char (point-min))
  (forward-line (alist-get 'line pos))
  (forward-char (alist-get 'character pos)))

(defun probe-hover-text ()
  (let* ((r (jsonrpc-request (eglot-current-server) :textDocument/hover
                             (eglot--TextDocumentPositionParams)))
         (c (and r (plist-get r :contents))))
    (cond ((null c) "")
          ((stringp c) c)
          ((plist-get c :value))
          (t (mapconcat (lambda (x) (if (stringp x) x (or (plist-get x :value) ""))) c "\n")))))

(defmacro probe-step (name &rest body)
  `(condition-case err (progn ,@body)
     (error (push (format "%s: %S" ,name err) probe-errors))))

(let ((main nil) (broken nil) (sniff nil))
  (probe-step "main"
    (setq main (list (cons 'mode (symbol-name major-mode))))
    (push (cons 'client (probe-connect)) main)
    (probe-goto (alist-get 'main probe-spec))
    (push (cons 'hover (probe-hover-text)) main)
    (xref-find-definitions (xref-backend-identifier-at-point 'eglot))
    (push (cons 'jump (list (cons 'path (buffer-file-name))
                            (cons 'line (1- (line-number-at-pos)))
                            (cons 'mode (symbol-name major-mode))))
          main))
  (probe-step "broken"
    (find-file (alist-get 'broken probe-spec))
    (setq broken (list (cons 'mode (symbol-name major-mode)) (cons 'client (probe-connect))))
    (probe-wait #'flymake-diagnostics)
    (push (cons 'diagnostics
                (mapcar (lambda (d)
                          (list (cons 'lnum (1- (line-number-at-pos (flymake-diagnostic-beg d))))
                                (cons 'message (flymake-diagnostic-text d))))
                        (flymake-diagnostics)))
          broken))
  (dolist (s (alist-get 'sniff probe-spec))
    (probe-step (alist-get 'path s)
      (find-file (alist-get 'path s))
      (let ((r (list (cons 'path (alist-get 'path s)) (cons 'mode (symbol-name major-mode)))))
        (when (alist-get 'hover s)
          (push (cons 'client (probe-connect)) r)
          (probe-goto (alist-get 'hover s))
          (push (cons 'hover (probe-hover-text)) r))
        (push r sniff))))
  (with-temp-file (alist-get 'out probe-spec)
    (insert (json-encode (list (cons 'version emacs-version)
                               (cons 'eglot (if (fboundp 'eglot--version) (eglot--version) ""))
                               (cons 'main main) (cons 'broken broken)
                               (cons 'sniff (vconcat (nreverse sniff)))
                               (cons 'errors (vconcat (nreverse probe-errors))))))))
(kill-emacs 0)
