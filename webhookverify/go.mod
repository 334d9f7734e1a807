module github.com/locrisk/locrisk/webhookverify

go 1.22
